import type { Catalog, ListKind } from '@switchboard/catalog';
import { rememberJsonText } from '@switchboard/core';
import type { Item, MethodHandler } from '../relay.types.js';
import { combine, principalListView } from './list-view.js';
import { optionalCursor } from './params.js';
import { withTaskSupport } from './task-support.js';
import { TaskRelay } from '../tasks/task-relay.js';

/**
 * Pages already served from a catalog, with their JSON text remembered: a catalog never
 * changes once built (a change builds a new one), so a host paging through 1,000 tools again
 * costs a map lookup and a string copy per page. Entries go with their catalog (WeakMap);
 * the bound only matters for catalogs of many pages.
 */
const served = new WeakMap<Catalog, Map<string, Item>>();
const MAX_PAGES_PER_CATALOG = 1024;

/** A merged list, one page at a time, with the gateway's own cursors. */
const listOf =
  (kind: ListKind): MethodHandler =>
  async (ctx, services) => {
    const page = await cachedPage(kind)(ctx, services);
    // A host the gateway relays tasks for is told which tools it may call as tasks (ADR 012).
    return kind === 'tools' && services.tasks && TaskRelay.enabledFor(ctx.session) ? withTaskSupport(page, services) : page;
  };

const cachedPage =
  (kind: ListKind): MethodHandler =>
  async ({ params, session }, services) => {
    const catalog = services.catalog.current;
    const cursor = optionalCursor(params);
    const pageSize = services.config().pageSize;
    // What this principal may see (the policy, its credentials).
    const view = principalListView(session.principal, kind, services);
    // Tools held back by pinning are hidden from everyone until accepted.
    const pins = kind === 'tools' && services.pins?.holdsAny ? services.pins : undefined;
    const filter = combine(pins && ((_item, origin) => !pins.isQuarantined(origin.server, origin.original)), view.filter);
    // No cursor and an empty one are different requests (the first page; an invalid cursor).
    const key = `${kind}\n${pageSize}\n${cursor === undefined ? '-' : `c${cursor}`}\n${view.key}\n${pins?.version ?? ''}`;
    let pages = served.get(catalog);
    const hit = pages?.get(key);
    if (hit) return hit;

    const page = catalog.page(kind, cursor, pageSize, filter);
    const result: Item = page.nextCursor === undefined ? { [kind]: page.items } : { [kind]: page.items, nextCursor: page.nextCursor };
    if (!pages) served.set(catalog, (pages = new Map()));
    // Only valid cursors get here (page() refuses others), so this bound is rarely reached.
    if (pages.size >= MAX_PAGES_PER_CATALOG) pages.clear();
    rememberJsonText(result, JSON.stringify(result));
    pages.set(key, result);
    return result;
  };

export const listTools = listOf('tools');
export const listPrompts = listOf('prompts');
export const listResources = listOf('resources');
export const listResourceTemplates = listOf('resourceTemplates');
