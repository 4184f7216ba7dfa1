import { createHash } from 'node:crypto';
import type { Item, ListKind } from './catalog.types.js';
import { compareKeys } from './sorted-list.js';

/** Per-list digests; `resources` covers resources and templates (one list_changed for both). */
export interface CatalogFingerprints {
  readonly tools: string;
  readonly prompts: string;
  readonly resources: string;
}

/** Computed once per build from the sorted public lists, so that `diff` is O(1). */
export function catalogFingerprints(lists: Readonly<Record<ListKind, readonly Item[]>>): CatalogFingerprints {
  return {
    tools: fingerprint(lists.tools),
    prompts: fingerprint(lists.prompts),
    resources: fingerprint(lists.resources, lists.resourceTemplates),
  };
}

/**
 * Object keys are sorted first: an upstream that re-sends the same definition with its
 * fields in another order has not changed anything a host cares about, and a spurious
 * list_changed would make every host refetch every list.
 */
export function fingerprint(...lists: ReadonlyArray<readonly Item[]>): string {
  const hash = createHash('sha256');
  for (const list of lists) {
    // The length marks where one list ends, so moving an item from resources to templates
    // changes the digest.
    hash.update(`[${list.length}]`);
    for (const item of list) hash.update(JSON.stringify(item, sortKeys)).update('\n');
  }
  return hash.digest('base64url');
}

function sortKeys(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(compareKeys)) sorted[key] = (value as Record<string, unknown>)[key];
  return sorted;
}
