import type { GatewayConfig } from '@switchboard/config';
import { describe, expect, it } from 'vitest';
import { setup } from '../test-support/catalog-sync-setup.js';

describe('CatalogSync: overlapping reads of one upstream', () => {
  it('a list_changed read that ends first is not undone by the full read, nor does it empty the other lists', async () => {
    const t = setup();
    t.emit().stateChanged!('up', 'ready', 'connecting');
    t.emit().notification!('up', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    // Pending: the full read (tools, prompts, resources, templates), then the tools re-read.
    expect(t.pending.map((p) => p.method)).toEqual([
      'tools/list',
      'prompts/list',
      'resources/list',
      'resources/templates/list',
      'tools/list',
    ]);
    // The re-read (started last) ends first, with the newer tools.
    t.pending[4].resolve([{ name: 'new' }]);
    t.pending.splice(4, 1);
    await t.settle();
    t.answer('tools/list', [{ name: 'old' }]);
    t.answer('prompts/list', [{ name: 'p' }]);
    t.answer('resources/list', [{ uri: 'r://1', name: 'r' }]);
    t.answer('resources/templates/list', []);
    await t.settle();
    expect(t.names('tools')).toEqual(['up__new']);
    expect(t.names('prompts')).toEqual(['up__p']);
    expect(t.names('resources')).toEqual(['r://1']);
  });

  it('a list_changed read that ends after the full read keeps what the full read brought', async () => {
    const t = setup();
    t.emit().stateChanged!('up', 'ready', 'connecting');
    t.emit().notification!('up', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    t.answer('tools/list', [{ name: 'old' }]);
    t.answer('prompts/list', [{ name: 'p' }]);
    t.answer('resources/list', [{ uri: 'r://1', name: 'r' }]);
    t.answer('resources/templates/list', []);
    await t.settle();
    expect(t.names('resources')).toEqual(['r://1']);
    t.answer('tools/list', [{ name: 'new' }]);
    await t.settle();
    expect(t.names('tools')).toEqual(['up__new']);
    expect(t.names('prompts')).toEqual(['up__p']);
    expect(t.names('resources')).toEqual(['r://1']);
  });
});

describe('CatalogSync: a list_changed flood', () => {
  it('reads a list once at a time, and once more after the read the flood ran into, whatever the count', async () => {
    const t = setup();
    t.emit().stateChanged!('up', 'ready', 'connecting');
    for (const method of ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']) t.answer(method, []);
    await t.settle();
    for (let i = 0; i < 1000; i++) t.emit().notification!('up', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    expect(t.pending.map((p) => p.method)).toEqual(['tools/list']);
    t.answer('tools/list', [{ name: 'v1' }]);
    await t.settle();
    // The flood ran into that read: one more, as its answer may predate the last change.
    expect(t.pending.map((p) => p.method)).toEqual(['tools/list']);
    t.answer('tools/list', [{ name: 'v2' }]);
    await t.settle();
    expect(t.pending).toEqual([]);
    expect(t.names('tools')).toEqual(['up__v2']);
  });
});

describe('CatalogSync: config changes', () => {
  it('a server removed before its first read ended is no longer waited for', async () => {
    const t = setup();
    let warmed = false;
    void t.sync.warm(60_000).then(() => (warmed = true));
    t.sync.configure({ namespace: 'prefix', separator: '__', servers: [] } as unknown as GatewayConfig);
    await t.settle();
    expect(warmed).toBe(true);
  });

  /** The upstream serving tool `t` (up__t). */
  async function withTool() {
    const t = setup();
    t.emit().stateChanged!('up', 'ready', 'connecting');
    expect(t.pending.map((p) => p.limits)).toEqual(Array(4).fill(t.server.lists));
    t.answer('tools/list', [{ name: 't' }]);
    t.answer('prompts/list', []);
    t.answer('resources/list', []);
    t.answer('resources/templates/list', []);
    await t.settle();
    return t;
  }

  it('forgets the reads of a server a reload removes', async () => {
    const t = await withTool();
    expect(t.sync.rememberedReads).toBe(4);
    t.sync.configure({ namespace: 'prefix', separator: '__', servers: [{ ...t.server, alias: 'u' }] } as unknown as GatewayConfig);
    expect(t.sync.rememberedReads).toBe(4);
    t.sync.configure({ namespace: 'prefix', separator: '__', servers: [] } as unknown as GatewayConfig);
    expect(t.sync.rememberedReads).toBe(0);
  });

  it('a reload that changes separator and alias renames once and notifies once', async () => {
    const t = await withTool();
    expect(t.names('tools')).toEqual(['up__t']);
    let notified = 0;
    t.store.onChange(() => notified++);
    t.sync.configure({
      namespace: 'prefix',
      separator: '.',
      servers: [{ ...t.server, alias: 'u' }],
    } as unknown as GatewayConfig);
    expect(t.names('tools')).toEqual(['u.t']);
    expect(notified).toBe(1);
  });

  it("reads a server's lists under its limits, and again when a reload changes them (not on other changes)", async () => {
    const t = await withTool();
    t.sync.configure({ namespace: 'prefix', separator: '__', servers: [{ ...t.server, alias: 'u' }] } as unknown as GatewayConfig);
    expect(t.pending).toEqual([]);
    const lists = { maxItems: 1, maxBytes: 65_536 };
    t.sync.configure({ namespace: 'prefix', separator: '__', servers: [{ ...t.server, alias: 'u', lists }] } as unknown as GatewayConfig);
    expect(t.pending.map((p) => [p.method, p.limits])).toEqual([
      ['tools/list', lists],
      ['prompts/list', lists],
      ['resources/list', lists],
      ['resources/templates/list', lists],
    ]);
    t.answer('tools/list', [{ name: 'first' }]);
    t.answer('prompts/list', []);
    t.answer('resources/list', []);
    t.answer('resources/templates/list', []);
    await t.settle();
    expect(t.names('tools')).toEqual(['u__first']);
    // With a change that restarts it: the new connection reads the lists, not the old one.
    const restarted = { ...t.server, alias: 'u', lists: { maxItems: 2, maxBytes: 65_536 }, env: { NEW: '1' } };
    t.sync.configure({ namespace: 'prefix', separator: '__', servers: [restarted] } as unknown as GatewayConfig);
    expect(t.pending).toEqual([]);
  });

  it('a server stopped to be restarted (its command or env changed) keeps its names known until it is back', async () => {
    const t = await withTool();
    t.sync.configure({ namespace: 'prefix', separator: '__', servers: [{ ...t.server, env: { NEW: '1' } }] } as unknown as GatewayConfig);
    t.emit().stateChanged!('up', 'stopped', 'ready');
    expect(t.names('tools')).toEqual([]);
    // A call meanwhile answers -32010 (unavailable), not "unknown tool".
    expect(t.store.departedTool('up__t')).toMatchObject({ server: 'up', name: 't' });
  });

  it('a server stopped because it was removed or disabled is forgotten', async () => {
    for (const servers of [[], [{ name: 'up', enabled: false }]]) {
      const t = await withTool();
      t.sync.configure({ namespace: 'prefix', separator: '__', servers } as unknown as GatewayConfig);
      t.emit().stateChanged!('up', 'stopped', 'ready');
      expect(t.store.departedTool('up__t')).toBeUndefined();
    }
  });
});
