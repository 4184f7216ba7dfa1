import type { Item, ListEntryOrigin } from './catalog.types.js';

/** Plain UTF-16 code-unit order: locale-independent, so every process sorts alike. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface ListEntry extends ListEntryOrigin {
  /** The public key: tool or prompt name, resource URI or URI template as hosts see it. */
  key: string;
  item: Item;
}

export type ListFilter = (item: Item, origin: ListEntryOrigin) => boolean;

export interface ListSlice {
  items: Item[];
  /** Key of the last item returned; absent when nothing was returned. */
  lastKey?: string;
  /** Whether a later item (that passes the filter) exists. */
  more: boolean;
}

/**
 * One public list, sorted by its unique key once at build time, so that a page is a binary
 * search plus a slice.
 */
export class SortedList {
  private readonly entries: readonly ListEntry[];
  readonly items: readonly Item[];

  /** `entries` must have unique keys; they are sorted here. */
  constructor(entries: readonly ListEntry[]) {
    this.entries = [...entries].sort((x, y) => compareKeys(x.key, y.key));
    this.items = Object.freeze(this.entries.map((e) => e.item));
  }

  /**
   * Up to `size` items whose key is strictly after `after` (from the start when undefined).
   * A filter (a principal's policy) is applied while scanning rather than after slicing, so
   * a page is never short or empty just because some items were hidden.
   */
  after(after: string | undefined, size: number, filter?: ListFilter): ListSlice {
    const all = this.entries;
    let i = after === undefined ? 0 : this.firstIndexAfter(after);
    if (!filter) {
      const end = Math.min(i + size, all.length);
      return { items: this.items.slice(i, end), lastKey: end > i ? all[end - 1].key : undefined, more: end < all.length };
    }
    const items: Item[] = [];
    let lastKey: string | undefined;
    for (; i < all.length && items.length < size; i++) {
      if (!filter(all[i].item, all[i])) continue;
      items.push(all[i].item);
      lastKey = all[i].key;
    }
    while (i < all.length && !filter(all[i].item, all[i])) i++;
    return { items, lastKey, more: i < all.length };
  }

  private firstIndexAfter(key: string): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(this.entries[mid].key, key) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
