import { invalidParams } from '@switchboard/core';
import type { Item } from '../relay.types.js';

/** Small readers that answer bad params with -32602 naming the field. */
export function requireString(params: Item, field: string): string {
  const value = params[field];
  if (typeof value !== 'string' || value.length === 0) throw invalidParams(`Invalid params: '${field}' must be a non-empty string`);
  return value;
}

/** `path`: how the error names the field when it is not at the top of params ('context.arguments'). */
export function optionalObject(params: Item, field: string, path = field): Item | undefined {
  const value = params[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidParams(`Invalid params: '${path}' must be an object`);
  }
  return value as Item;
}

/** An object whose values are all strings (prompts/get's arguments), or undefined. */
export function optionalStringMap(params: Item, field: string, path = field): Record<string, string> | undefined {
  const value = optionalObject(params, field, path);
  if (value === undefined) return undefined;
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') throw invalidParams(`Invalid params: '${path}.${key}' must be a string`);
  }
  return value as Record<string, string>;
}

export function optionalCursor(params: Item): string | undefined {
  const cursor = params.cursor;
  if (cursor === undefined || cursor === null) return undefined;
  if (typeof cursor !== 'string') throw invalidParams('Invalid cursor');
  return cursor;
}
