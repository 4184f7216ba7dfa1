import type { ListLimits } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import type { LeftOut } from './left-out-items.js';
import { CappedList, type CutList } from './list-cap.js';
import { describeItem, servedItem, taskOnly, taskOptional, unservableReason } from './list-items.js';

type Item = Record<string, unknown>;

/** A cursor loop (or a list of empty pages) ends here even under the item limit. */
export const MAX_LIST_PAGES = 1000;

/**
 * The longest nextCursor followed. Cursors are opaque tokens, a few hundred characters at
 * most in practice; each one is sent back and kept (to notice a loop) until the read ends,
 * so an upstream sending megabyte cursors page after page would make the gateway hold and
 * send gigabytes over MAX_LIST_PAGES pages while its lists stay unread.
 */
export const MAX_CURSOR_CHARS = 16 * 1024;

export interface ListRead {
  items: Item[];
  /** Set when the list passed a limit and was cut there. */
  cut?: CutList;
  /** The names of the tools served that can only be called as tasks. */
  taskOnly?: string[];
  /** Set when items no host could be served were left out; the caller logs them (LeftOutItems). */
  leftOut?: LeftOut;
  /** The names of the tools served that may be called as tasks or not (execution.taskSupport "optional"). */
  taskOptional?: string[];
}

/**
 * Reads a whole list with `page` (one request per cursor; the upstream's cursors never leave
 * the gateway), keeping what `limits` allow: once an item does not fit, no further page is
 * asked for. Items no host could be served (unservableReason) are left out, reported in
 * `leftOut`, and not counted against the limits.
 */
export async function readList(
  page: (cursor: string | undefined) => Promise<Item>,
  method: string,
  key: string,
  limits: ListLimits,
  log: Logger,
  runsTasks = false,
): Promise<ListRead> {
  const list = new CappedList(limits);
  const examples: string[] = [];
  let dropped = 0;
  const taskOnlyNames: string[] = [];
  const taskOptionalNames: string[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  for (; pages < MAX_LIST_PAGES && list.cutBy === undefined; pages++) {
    const result = await page(cursor);
    const batch = result[key];
    // A page without its list is no list (a conforming client, the SDK's, throws on it).
    // Read as an empty one it served none of the upstream's items, and /readyz said ready:
    // it fails the read, so the last list read stays served, with a warning, and the
    // upstream is degraded (catalog-sync).
    if (!Array.isArray(batch)) throw new Error(`the ${method} result has no '${key}' list`);
    for (const item of batch as unknown[]) {
      const reason = unservableReason(key, item, runsTasks);
      if (reason !== undefined) {
        if (dropped++ < 5) examples.push(`${describeItem(item)}: ${reason}`);
      } else if (!list.add(servedItem(key, item as Item))) {
        break;
      } else if (key === 'tools' && taskOnly(item as Item)) {
        taskOnlyNames.push((item as Item).name as string);
      } else if (key === 'tools' && runsTasks && taskOptional(item as Item)) {
        taskOptionalNames.push((item as Item).name as string);
      }
    }
    const next = result.nextCursor;
    if (typeof next !== 'string' || seen.has(next)) break;
    if (next.length > MAX_CURSOR_CHARS) {
      log.warn(
        { method, pages: pages + 1, cursorChars: next.length, limit: MAX_CURSOR_CHARS },
        `${method}: the upstream's nextCursor is longer than ${MAX_CURSOR_CHARS} characters; the rest of the list is not served`,
      );
      break;
    }
    seen.add(next);
    cursor = next;
  }
  if (pages === MAX_LIST_PAGES && list.cutBy === undefined) {
    log.warn({ method, pages, items: list.items.length }, `${method}: stopped after ${pages} pages; the rest of the list is not served`);
  }
  const read: ListRead = { items: list.items };
  const cut = list.cutOf(method);
  if (cut !== undefined) read.cut = cut;
  if (dropped > 0) read.leftOut = { count: dropped, examples };
  if (taskOnlyNames.length > 0) read.taskOnly = taskOnlyNames;
  if (taskOptionalNames.length > 0) read.taskOptional = taskOptionalNames;
  return read;
}
