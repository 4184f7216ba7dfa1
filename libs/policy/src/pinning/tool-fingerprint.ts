import { hash } from 'node:crypto';
import { canonicalJson } from '@switchboard/core';

/** What a pin covers: what a model reads to decide how to use a tool. */
export function pinnedDefinition(tool: Record<string, unknown>): Record<string, unknown> {
  return {
    name: tool.name,
    description: tool.description ?? null,
    inputSchema: tool.inputSchema ?? null,
    annotations: tool.annotations ?? null,
  };
}

/** SHA-256 of the definition's canonical JSON: key order and whitespace do not matter. */
export function definitionFingerprint(definition: Record<string, unknown>): string {
  return hash('sha256', canonicalJson(definition));
}
