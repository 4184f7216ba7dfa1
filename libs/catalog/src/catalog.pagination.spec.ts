import { ErrorCode, McpError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from './build-catalog.js';
import type { Catalog } from './catalog.js';
import type { Item, ListKind, UpstreamSnapshot } from './catalog.types.js';

const opts = { separator: '__', maxLength: 64 };

function snap(server: string, parts: Partial<UpstreamSnapshot> = {}): UpstreamSnapshot {
  return { server, prefix: server, namespace: 'prefix', tools: [], prompts: [], resources: [], resourceTemplates: [], ...parts };
}

const tool = (name: string): Item => ({ name, description: `Tool ${name}`, inputSchema: { type: 'object', properties: {} } });
const tools = (count: number, from = 0) => Array.from({ length: count }, (_, i) => tool(`op_${String(from + i).padStart(4, '0')}`));

/** Follows nextCursor to the end, as a host does. */
function collect(catalog: Catalog, kind: ListKind, pageSize: number): { pages: Item[][]; all: Item[] } {
  const pages: Item[][] = [];
  let cursor: string | undefined;
  do {
    const page = catalog.page(kind, cursor, pageSize);
    pages.push(page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { pages, all: pages.flat() };
}

function expectInvalidCursor(fn: () => unknown) {
  expect(fn).toThrow(McpError);
  try {
    fn();
  } catch (err) {
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
  }
}

describe('Catalog.page', () => {
  const servers = ['alpha', 'beta', 'gamma'].map((s) => snap(s, { tools: tools(250) }));
  const catalog = buildCatalog(servers, opts);

  it('3 servers x 250 tools in pages of 100 concatenate to the full list, no duplicates', () => {
    const { pages, all } = collect(catalog, 'tools', 100);
    expect(pages.map((p) => p.length)).toEqual([100, 100, 100, 100, 100, 100, 100, 50]);
    expect(all).toEqual(catalog.items('tools'));
    expect(new Set(all.map((t) => t.name)).size).toBe(750);
  });

  it('omits nextCursor on the last page, also when the list divides evenly', () => {
    const even = buildCatalog([snap('a', { tools: tools(200) })], opts);
    const { pages } = collect(even, 'tools', 100);
    expect(pages.map((p) => p.length)).toEqual([100, 100]);
    expect(even.page('tools', undefined, 500)).not.toHaveProperty('nextCursor');
  });

  it('an empty list is one empty page', () => {
    expect(catalog.page('prompts', undefined, 50)).toEqual({ items: [] });
  });

  it('a cursor stays valid across a rebuild: no duplicates, no skips of items that stayed', () => {
    const first = catalog.page('tools', undefined, 100);
    const lastSeen = first.items.at(-1)!.name as string;
    // One tool appears before the cursor and one after it; one that was not yet seen disappears.
    const next = buildCatalog(
      [
        snap('alpha', { tools: [...tools(250), tool('aaa_new')] }),
        snap('beta', { tools: [...tools(250).filter((t) => t.name !== 'op_0100'), tool('zzz_new')] }),
        snap('gamma', { tools: tools(250) }),
      ],
      opts,
    );
    let cursor = first.nextCursor;
    const rest: Item[] = [];
    while (cursor !== undefined) {
      const page = next.page('tools', cursor, 100);
      rest.push(...page.items);
      cursor = page.nextCursor;
    }
    const seen = [...first.items, ...rest].map((t) => t.name as string);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).not.toContain('alpha__aaa_new');
    expect(seen).toContain('beta__zzz_new');
    expect(seen).not.toContain('beta__op_0100');
    const stayed = (catalog.items('tools').map((t) => t.name) as string[]).filter((n) => n !== 'beta__op_0100');
    for (const name of stayed) expect(seen).toContain(name);
    expect((rest[0].name as string) > lastSeen).toBe(true);
  });

  it('a cursor whose last item was removed resumes at the next key', () => {
    const before = buildCatalog([snap('a', { tools: tools(5) })], opts);
    const page = before.page('tools', undefined, 2);
    const after = buildCatalog([snap('a', { tools: tools(5).filter((t) => t.name !== 'op_0001') })], opts);
    expect(after.page('tools', page.nextCursor, 10).items.map((t) => t.name)).toEqual(['a__op_0002', 'a__op_0003', 'a__op_0004']);
  });

  it('pages resources and templates by their URI', () => {
    const res = buildCatalog(
      [snap('fs', { resources: ['file:///c', 'file:///a', 'file:///b'].map((uri) => ({ uri, name: uri })) })],
      opts,
    );
    const first = res.page('resources', undefined, 2);
    expect(first.items.map((r) => r.uri)).toEqual(['file:///a', 'file:///b']);
    expect(res.page('resources', first.nextCursor, 2)).toEqual({ items: [{ uri: 'file:///c', name: 'file:///c' }] });
  });

  it('applies a filter while paging, so hidden items never make a page short', () => {
    const onlyBeta = (_item: Item, origin: { server: string }) => origin.server === 'beta';
    const pages: Item[][] = [];
    let cursor: string | undefined;
    do {
      const page = catalog.page('tools', cursor, 100, onlyBeta);
      pages.push(page.items);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(pages.map((p) => p.length)).toEqual([100, 100, 50]);
    expect(pages.flat().every((t) => (t.name as string).startsWith('beta__'))).toBe(true);
  });

  it('ends with the last visible item, not with an empty page, when the rest is hidden', () => {
    const onlyAlpha = (_item: Item, origin: { server: string }) => origin.server === 'alpha';
    const first = catalog.page('tools', undefined, 125, onlyAlpha);
    const second = catalog.page('tools', first.nextCursor, 125, onlyAlpha);
    expect(second.items).toHaveLength(125);
    expect(second.items.at(-1)!.name).toBe('alpha__op_0249');
    expect(second).not.toHaveProperty('nextCursor');
  });

  it('rejects invalid cursors with -32602', () => {
    const toolsCursor = catalog.page('tools', undefined, 100).nextCursor!;
    expectInvalidCursor(() => catalog.page('tools', 'garbage!!', 100));
    expectInvalidCursor(() => catalog.page('prompts', toolsCursor, 100));
    expectInvalidCursor(() => catalog.page('tools', toolsCursor.slice(0, -2), 100));
    expectInvalidCursor(() => catalog.page('tools', 7, 100));
    expectInvalidCursor(() => catalog.page('tools', null, 100));
    const tampered = Buffer.from('{"k":"tools","a":', 'utf8').toString('base64url');
    expectInvalidCursor(() => catalog.page('tools', tampered, 100));
  });

  it('refuses a page size that is not a positive integer', () => {
    expect(() => catalog.page('tools', undefined, 0)).toThrow(RangeError);
    expect(() => catalog.page('tools', undefined, 2.5)).toThrow(RangeError);
  });
});
