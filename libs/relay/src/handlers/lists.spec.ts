import { CatalogStore } from '@switchboard/catalog';
import { encodeMessage, type JsonRpcRequest } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import type { RelayServices, RequestContext } from '../relay.types.js';
import { listTools } from './lists.js';

type Item = Record<string, unknown>;

const tools = (names: string[]) => names.map((name) => ({ name, inputSchema: { type: 'object' } }));

function setup(pageSize: number) {
  const catalog = new CatalogStore();
  const services = { catalog, config: () => ({ pageSize }) } as unknown as RelayServices;
  const list = (cursor?: string) =>
    listTools({ params: cursor ? { cursor } : {}, request: {} as JsonRpcRequest, session: { principal: { id: 'alice', authMethod: 'api-key' } } } as RequestContext, services);
  const put = (server: string, names: string[]) =>
    catalog.setSnapshot({ server, prefix: server, namespace: 'prefix', tools: tools(names), prompts: [], resources: [], resourceTemplates: [] });
  return { list, put };
}

const names = (page: Item) => (page.tools as Item[]).map((t) => t.name);
const asSent = (result: Item) => JSON.parse(encodeMessage({ jsonrpc: '2.0', id: 1, result })).result as Item;

describe('tools/list pages', () => {
  it('serves a repeated page from the cache, encoded exactly as the page itself', async () => {
    const t = setup(2);
    t.put('a', ['x', 'y', 'z']);
    const first = await t.list();
    const again = await t.list();
    expect(again).toBe(first);
    expect(asSent(again)).toEqual(first);
    expect(names(first)).toEqual(['a__x', 'a__y']);
    const second = await t.list(first.nextCursor as string);
    expect(names(second)).toEqual(['a__z']);
    expect(second.nextCursor).toBeUndefined();
  });

  it('never serves a page of a catalog that has since changed', async () => {
    const t = setup(10);
    t.put('a', ['x']);
    const before = await t.list();
    t.put('b', ['w']);
    const after = await t.list();
    expect(names(before)).toEqual(['a__x']);
    expect(names(asSent(after))).toEqual(['a__x', 'b__w']);
  });

  it('still refuses a cursor it did not issue', async () => {
    const t = setup(10);
    t.put('a', ['x']);
    await expect(t.list('bogus')).rejects.toMatchObject({ code: -32602 });
  });
});
