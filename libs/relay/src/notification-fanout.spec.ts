import { CatalogStore } from '@switchboard/catalog';
import { silentLogger } from '@switchboard/observability';
import { DefaultTransportFactory, UpstreamRegistry, type UpstreamConnection } from '@switchboard/upstream';
import { describe, expect, it } from 'vitest';
import { NotificationFanout, pushUpstreamLogLevel, upstreamLogLevel } from './notification-fanout.js';
import { SessionDirectory, type DownstreamSession } from './session.js';

type Item = Record<string, unknown>;

/** An upstream whose logging/setLevel requests stay pending until the test answers them. */
function upstream() {
  const sent: { params: Item | undefined; resolve(): void }[] = [];
  const connection = {
    name: 'up',
    isAvailable: true,
    capabilities: { logging: {} },
    config: { timeouts: { requestMs: 1000 } },
    request: (_method: string, params: Item | undefined) =>
      new Promise<Item>((resolve) => sent.push({ params, resolve: () => resolve({}) })),
  } as unknown as UpstreamConnection;
  return { connection, sent };
}

function session(id: string, sessions: SessionDirectory): DownstreamSession {
  const s = { id, initialized: true, send: async () => undefined } as unknown as DownstreamSession;
  sessions.add(s);
  return s;
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('pushUpstreamLogLevel', () => {
  it('sends one setLevel at a time per upstream, each with the level wanted when it is sent', async () => {
    const { connection, sent } = upstream();
    const sessions = new SessionDirectory();
    const quiet = session('a', sessions);
    const chatty = session('b', sessions);

    quiet.logLevel = 'error';
    const first = pushUpstreamLogLevel(connection, sessions);
    await tick();
    chatty.logLevel = 'debug';
    const second = pushUpstreamLogLevel(connection, sessions);
    await tick();
    // The second waits for the first: on HTTP upstreams two at once could arrive swapped.
    // (b, with no level of its own yet, wants the default: info.)
    expect(sent.map((s) => s.params)).toEqual([{ level: 'info' }]);

    sent[0].resolve();
    await first;
    await tick();
    expect(sent.map((s) => s.params)).toEqual([{ level: 'info' }, { level: 'debug' }]);
    let settled = false;
    void second.then(() => (settled = true));
    await tick();
    // The caller (logging/setLevel) answers the host only once the upstream has the level.
    expect(settled).toBe(false);
    sent[1].resolve();
    await second;
  });

  it('settles without a request when no session asked for a level, and swallows failures', async () => {
    const { connection, sent } = upstream();
    const sessions = new SessionDirectory();
    session('a', sessions);
    await pushUpstreamLogLevel(connection, sessions);
    expect(sent).toEqual([]);

    const failing = { ...connection, request: () => Promise.reject(new Error('gone')) } as unknown as UpstreamConnection;
    sessions.get('a')!.logLevel = 'info';
    await expect(pushUpstreamLogLevel(failing, sessions)).resolves.toBeUndefined();
  });
});

describe('the level asked of a shared upstream', () => {
  it('counts a session that set no level as wanting the default (info): one quiet session does not silence the others', () => {
    const sessions = new SessionDirectory();
    session('quiet', sessions).logLevel = 'error';
    session('default', sessions);
    expect(upstreamLogLevel(sessions)).toBe('info');
    session('chatty', sessions).logLevel = 'debug';
    expect(upstreamLogLevel(sessions)).toBe('debug');
  });
});

describe('a per-session connection', () => {
  it('is asked for its own session\'s level, not the most verbose of all', () => {
    const sessions = new SessionDirectory();
    session('quiet', sessions).logLevel = 'error';
    session('chatty', sessions).logLevel = 'debug';
    expect(upstreamLogLevel(sessions)).toBe('debug');
    expect(upstreamLogLevel(sessions, 'quiet')).toBe('error');
    expect(upstreamLogLevel(sessions, 'gone')).toBeUndefined();
  });

  it("delivers a shared server's log lines only to the principals the policy lets read them", () => {
    const sessions = new SessionDirectory();
    const got: Record<string, unknown[]> = { alice: [], eve: [] };
    for (const id of ['alice', 'eve']) {
      const s = { id, initialized: true, principal: { id }, send: async (m: unknown) => void got[id].push(m) };
      sessions.add(s as unknown as DownstreamSession);
    }
    const registry = new UpstreamRegistry({ logger: silentLogger(), factory: new DefaultTransportFactory(), client: { name: 't', version: '1' } });
    const listeners: { notification?: (server: string, n: unknown) => void }[] = [];
    registry.addListener = (l) => {
      listeners.push(l as never);
      return () => undefined;
    };
    new NotificationFanout(sessions, registry, new CatalogStore(), () => false, (principal, server) => principal.id === 'alice' && server === 'fx');
    for (const l of listeners) l.notification?.('fx', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: 'secret' } });
    expect(got.alice).toHaveLength(1);
    expect(got.eve).toEqual([]);
  });

  it('has its log lines delivered to its session only', () => {
    const sessions = new SessionDirectory();
    const got: Record<string, unknown[]> = { a: [], b: [] };
    for (const id of ['a', 'b']) {
      const s = { id, initialized: true, principal: { id: 'same-user' }, send: async (m: unknown) => void got[id].push(m) };
      sessions.add(s as unknown as DownstreamSession);
    }
    const registry = new UpstreamRegistry({ logger: silentLogger(), factory: new DefaultTransportFactory(), client: { name: 't', version: '1' } });
    const fanout = new NotificationFanout(sessions, registry, new CatalogStore(), () => true);
    fanout.sessionNotification('shell', 'b', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: 'x' } });
    expect(got.a).toEqual([]);
    expect(got.b).toEqual([{ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: 'x', logger: 'shell' } }]);
  });

  it("goes without the upstream's task id when a line is about one of its tasks (2025-11-25 related-task)", () => {
    const sessions = new SessionDirectory();
    const got: unknown[] = [];
    sessions.add({ id: 'a', initialized: true, principal: { id: 'u' }, send: async (m: unknown) => void got.push(m) } as unknown as DownstreamSession);
    const registry = new UpstreamRegistry({ logger: silentLogger(), factory: new DefaultTransportFactory(), client: { name: 't', version: '1' } });
    const fanout = new NotificationFanout(sessions, registry, new CatalogStore(), () => true);
    const _meta = { 'io.modelcontextprotocol/related-task': { taskId: 'upstream-task' }, other: 1 };
    fanout.sessionNotification('jobs', 'a', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: 'step 2', _meta } });
    expect(got).toEqual([{ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: 'step 2', _meta: { other: 1 }, logger: 'jobs' } }]);
  });
});

describe('list_changed', () => {
  it('reaches each session only for the lists it was given at initialize', () => {
    const sessions = new SessionDirectory();
    const got: Record<string, string[]> = { narrow: [], wide: [], unnegotiated: [] };
    const caps: Record<string, Item | undefined> = {
      narrow: { tools: { listChanged: true }, logging: {} },
      wide: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true }, logging: {} },
      unnegotiated: undefined,
    };
    for (const id of Object.keys(got)) {
      const s = { id, initialized: true, serverCapabilities: caps[id], send: async (m: { method: string }) => void got[id].push(m.method) };
      sessions.add(s as unknown as DownstreamSession);
    }
    const registry = new UpstreamRegistry({ logger: silentLogger(), factory: new DefaultTransportFactory(), client: { name: 't', version: '1' } });
    new NotificationFanout(sessions, registry, new CatalogStore()).listsChanged();
    expect(got).toEqual({
      narrow: ['notifications/tools/list_changed'],
      wide: ['notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/resources/list_changed'],
      unnegotiated: [],
    });
  });
});
