import { CatalogStore } from '@switchboard/catalog';
import type { GatewayConfig, ListLimits, ServerConfig } from '@switchboard/config';
import { silentLogger } from '@switchboard/observability';
import type { UpstreamConnection, UpstreamListener, UpstreamRegistry } from '@switchboard/upstream';
import { describe, expect, it, vi } from 'vitest';
import { CatalogSync } from './catalog-sync.js';

type Item = Record<string, unknown>;

interface Pending {
  method: string;
  limits: ListLimits;
  resolve(items: Item[]): void;
}

/** One upstream whose list reads stay pending until the test answers them, in any order. */
function setup(logger = silentLogger()) {
  const pending: Pending[] = [];
  let listener: UpstreamListener = {};
  const connection = {
    name: 'up',
    isAvailable: true,
    capabilities: { tools: {}, prompts: {}, resources: {} },
    listAll: (method: string, _key: string, limits: ListLimits) => new Promise<Item[]>((resolve) => pending.push({ method, limits, resolve })),
    reportTrouble: () => undefined,
  } as unknown as UpstreamConnection;
  const registry = {
    addListener: (l: UpstreamListener) => {
      listener = l;
      return () => undefined;
    },
    get: (name: string) => (name === 'up' ? connection : undefined),
  } as unknown as UpstreamRegistry;
  const store = new CatalogStore();
  const sync = new CatalogSync(registry, store, logger);
  const server = {
    name: 'up',
    transport: 'stdio',
    command: 'x',
    args: [],
    env: {},
    enabled: true,
    lists: { maxItems: 100, maxBytes: 65_536 },
  } as unknown as ServerConfig;
  sync.configure({ namespace: 'prefix', separator: '__', servers: [server] } as unknown as GatewayConfig);

  const answer = (method: string, items: Item[]) => {
    const i = pending.findIndex((p) => p.method === method);
    if (i < 0) throw new Error(`no pending ${method}`);
    pending.splice(i, 1)[0].resolve(items);
  };
  const settle = () => new Promise((r) => setTimeout(r, 0));
  const names = (kind: 'tools' | 'resources' | 'prompts') =>
    store.current.items(kind).map((i) => String(kind === 'resources' ? i.uri : i.name));
  return { pending, answer, settle, names, emit: () => listener, store, sync, server };
}

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

describe('CatalogSync: warm (what initialize waits for)', () => {
  it('waits for a list_changed read that supersedes the full read, so the first lists are complete', async () => {
    const t = setup();
    let warmed = false;
    void t.sync.warm(60_000).then(() => (warmed = true));
    t.emit().stateChanged!('up', 'ready', 'connecting');
    // The upstream registers more tools once initialized, and says so at once.
    t.emit().notification!('up', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    t.answer('tools/list', [{ name: 'early' }]);
    t.answer('prompts/list', []);
    t.answer('resources/list', []);
    t.answer('resources/templates/list', []);
    await t.settle();
    expect(warmed).toBe(false);
    t.answer('tools/list', [{ name: 'early' }, { name: 'late' }]);
    await t.settle();
    expect(warmed).toBe(true);
    expect(t.names('tools')).toEqual(['up__early', 'up__late']);
  });

  it('does not wait for an upstream whose first connect failed', async () => {
    const t = setup();
    let warmed = false;
    void t.sync.warm(60_000).then(() => (warmed = true));
    t.emit().stateChanged!('up', 'down', 'connecting');
    await t.settle();
    expect(warmed).toBe(true);
  });

  it('logs the upstreams it stopped waiting for when the wait runs out, and nothing when they settle', async () => {
    vi.useFakeTimers();
    try {
      const logger = silentLogger();
      const info = vi.spyOn(logger, 'info');
      const t = setup(logger);
      const warmed = t.sync.warm(5_000);
      await vi.advanceTimersByTimeAsync(5_000);
      await warmed;
      expect(info).toHaveBeenCalledWith({ upstreams: ['up'] }, expect.stringMatching(/stopped waiting for upstreams still on their first connect/));

      const settled = setup(logger);
      info.mockClear();
      const answered = settled.sync.warm(5_000);
      settled.emit().stateChanged!('up', 'down', 'connecting');
      await vi.advanceTimersByTimeAsync(5_000);
      await answered;
      expect(info).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  it('tells the catalog to keep what names mean once the first reads have ended, not before', async () => {
    const t = setup();
    const keepMeanings = vi.spyOn(t.store, 'keepMeanings');
    t.emit().stateChanged!('up', 'ready', 'connecting');
    t.answer('tools/list', [{ name: 'x' }]);
    t.answer('prompts/list', []);
    t.answer('resources/list', []);
    await t.settle();
    expect(keepMeanings).not.toHaveBeenCalled();
    t.answer('resources/templates/list', []);
    await t.settle();
    expect(keepMeanings).toHaveBeenCalled();
  });

  it('tells the catalog to keep what names mean when a host is let in before the first reads end', async () => {
    vi.useFakeTimers();
    try {
      const t = setup();
      const keepMeanings = vi.spyOn(t.store, 'keepMeanings');
      const warmed = t.sync.warm(5_000);
      expect(keepMeanings).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(5_000);
      await warmed;
      expect(keepMeanings).toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
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

describe('CatalogSync.listsRead: waiting for an upstream just back to be read', () => {
  it('resolves at once with no read under way, once every read of the upstream has ended, or after maxMs', async () => {
    const t = setup();
    let done = false;
    await t.sync.listsRead('up', 60_000);
    t.emit().stateChanged!('up', 'ready', 'connecting');
    void t.sync.listsRead('up', 60_000).then(() => (done = true));
    t.answer('tools/list', [{ name: 'echo' }]);
    t.answer('prompts/list', []);
    t.answer('resources/list', []);
    await t.settle();
    expect(done).toBe(false); // the templates are still being read
    t.answer('resources/templates/list', []);
    await t.settle();
    expect(done).toBe(true);
    expect(t.names('tools')).toEqual(['up__echo']); // read by the time it resolves

    vi.useFakeTimers();
    try {
      t.emit().notification!('up', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      let gaveUp = false;
      void t.sync.listsRead('up', 1000).then(() => (gaveUp = true));
      await vi.advanceTimersByTimeAsync(999);
      expect(gaveUp).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(gaveUp).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
