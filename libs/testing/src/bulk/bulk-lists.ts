/**
 * The lists of the bulk fixture: N tools and M resources, made one page at a time from their
 * index, so that a list of millions costs the fixture nothing to hold. It stands for the
 * upstreams the gateway's list caps are for: a filesystem server listing a huge tree, one
 * that answers 10,000 tools a page for page after page, or a few tools with megabyte
 * descriptions.
 */
import type { Resource, Tool } from '@modelcontextprotocol/server';

export interface BulkOptions {
  /** BULK_TOOLS: tools bulk_0000000.. */
  readonly tools: number;
  /** BULK_RESOURCES: resources bulk://item/0000000.. */
  readonly resources: number;
  /** BULK_PAGE_SIZE: items per page (default 1000). */
  readonly pageSize: number;
  /** BULK_DESCRIPTION_BYTES: each item's description is this many ASCII characters (default 40). */
  readonly descriptionBytes: number;
}

export interface BulkPage<T> {
  readonly items: T[];
  readonly nextCursor?: string;
}

export function bulkOptionsFromEnv(env: NodeJS.ProcessEnv): BulkOptions {
  const pageSize = count(env, 'BULK_PAGE_SIZE') ?? 1000;
  if (pageSize === 0) throw new Error('BULK_PAGE_SIZE must be at least 1');
  return {
    tools: count(env, 'BULK_TOOLS') ?? 0,
    resources: count(env, 'BULK_RESOURCES') ?? 0,
    pageSize,
    descriptionBytes: count(env, 'BULK_DESCRIPTION_BYTES') ?? 40,
  };
}

/** The page of tools that starts at `cursor` (the index of its first item, as a string). */
export function bulkTools(options: BulkOptions, cursor: string | undefined): BulkPage<Tool> {
  return page(options.tools, options, cursor, (i, description) => ({
    name: `bulk_${padded(i)}`,
    description,
    inputSchema: { type: 'object', properties: { value: { type: 'string' } } },
  }));
}

/** The page of resources that starts at `cursor`. */
export function bulkResources(options: BulkOptions, cursor: string | undefined): BulkPage<Resource> {
  return page(options.resources, options, cursor, (i, description) => ({
    uri: `bulk://item/${padded(i)}`,
    name: `item_${padded(i)}`,
    description,
    mimeType: 'text/plain',
  }));
}

function page<T>(total: number, options: BulkOptions, cursor: string | undefined, make: (i: number, description: string) => T): BulkPage<T> {
  const start = cursor === undefined ? 0 : Number(cursor);
  if (!Number.isSafeInteger(start) || start < 0) throw new Error(`invalid cursor ${JSON.stringify(cursor)}`);
  const end = Math.min(total, start + options.pageSize);
  const description = 'x'.repeat(options.descriptionBytes);
  const items: T[] = [];
  for (let i = start; i < end; i++) items.push(make(i, description));
  return end < total ? { items, nextCursor: String(end) } : { items };
}

const padded = (i: number) => String(i).padStart(7, '0');

function count(env: NodeJS.ProcessEnv, key: string): number | undefined {
  const raw = env[key];
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw new Error(`${key} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}
