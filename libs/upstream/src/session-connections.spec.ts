import type { ServerConfig } from '@switchboard/config';
import { ErrorCode, McpError, type JsonRpcMessage, type JsonRpcRequest } from '@switchboard/core';
import { silentLogger } from '@switchboard/observability';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionConnections } from './session-connections.js';
import type { TransportFactory } from './transports/transport-factory.js';
import type { UpstreamTransport } from './transports/upstream-transport.js';

/** An upstream that remembers what its client declared, and counts the calls on its connection. */
class CountingUpstream implements UpstreamTransport {
  onmessage?: (m: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (e: Error) => void;
  closed = false;
  declared?: unknown;
  calls = 0;
  async start() {}
  async send(m: JsonRpcMessage) {
    if (this.closed) throw new Error('closed');
    if (!('method' in m) || !('id' in m)) return;
    const req = m as JsonRpcRequest;
    if (req.method === 'initialize') this.declared = req.params?.capabilities;
    // A call asked to hold stays in flight, unanswered, until the connection closes.
    if ((req.params as { hold?: boolean } | undefined)?.hold) return;
    const result =
      req.method === 'initialize'
        ? { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'counter', version: '1' } }
        : { calls: ++this.calls };
    queueMicrotask(() => this.onmessage?.({ jsonrpc: '2.0', id: req.id, result }));
  }
  async close() {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}

const opened: CountingUpstream[] = [];
const factory: TransportFactory = {
  async create() {
    const t = new CountingUpstream();
    opened.push(t);
    return t;
  },
};

const server = (extra: Partial<ServerConfig> = {}): ServerConfig => ({
  name: 'shell',
  transport: 'stdio',
  command: 'node',
  args: [],
  env: {},
  timeouts: { connectMs: 1000, requestMs: 1000, maxRequestMs: 1000 },
  enabled: true,
  pin: 'strict',
  isolation: 'per-session',
  ...extra,
}) as ServerConfig;

let pool: SessionConnections;
const make = (extra: Partial<ConstructorParameters<typeof SessionConnections>[0]> = {}) =>
  (pool = new SessionConnections({
    logger: silentLogger(),
    factory,
    client: { name: 'test', version: '1' },
    clientCapabilities: { shared: 'not for sessions' },
    capabilitiesFor: (_server, session) => ({ declaredFor: session }),
    ...extra,
  }));

afterEach(async () => {
  await pool?.stopAll();
  opened.length = 0;
});

describe('SessionConnections', () => {
  it("gives each session its own connection, declaring what that session's host can answer", async () => {
    make();
    const [s1, s2, again] = await Promise.all([
      pool.connectionFor(server(), 's1'),
      pool.connectionFor(server(), 's2'),
      pool.connectionFor(server(), 's1'),
    ]);
    expect(s1).toBe(again);
    expect(s1).not.toBe(s2);
    await s1.request('tools/call', {});
    expect(await s1.request('tools/call', {})).toEqual({ calls: 2 });
    expect(await s2.request('tools/call', {})).toEqual({ calls: 1 });
    expect(opened.map((t) => t.declared)).toEqual([{ declaredFor: 's1' }, { declaredFor: 's2' }]);
    expect(pool.ownerOf(s2)).toBe('s2');
  });

  it('still names the owner of a connection a config change retired while a call was in flight on it', async () => {
    make();
    const before = await pool.connectionFor(server(), 's1');
    const held = before.request('tools/call', { hold: true }).catch(() => undefined);
    await vi.waitFor(() => expect(before.inFlight).toBe(1), { timeout: 5000 });
    pool.refresh([server({ args: ['changed'] })]);
    expect(pool.existing('shell', 's1')).toBeUndefined();
    expect(before.state).not.toBe('stopped');
    // The retired connection still tags what it says with 's1': its requests are s1's too.
    expect(pool.ownerOf(before)).toBe('s1');
    const after = await pool.connectionFor(server({ args: ['changed'] }), 's1');
    expect(after).not.toBe(before);
    expect([pool.ownerOf(before), pool.ownerOf(after)]).toEqual(['s1', 's1']);
    await pool.stopAll();
    await held;
  });

  it("closes a session's connections when it ends, and only those", async () => {
    make();
    const s1 = await pool.connectionFor(server(), 's1');
    const s2 = await pool.connectionFor(server(), 's2');
    await pool.closeOwner('s1');
    expect(s1.state).toBe('stopped');
    expect(opened[0].closed).toBe(true);
    expect(s2.isAvailable).toBe(true);
    expect(pool.existing('shell', 's1')).toBeUndefined();
  });

  it('refuses a session beyond the cap with -32010 rather than closing another session', async () => {
    make({ maxPerServer: 2 });
    const s1 = await pool.connectionFor(server(), 's1');
    await pool.connectionFor(server(), 's2');
    const error = await pool.connectionFor(server(), 's3').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.UpstreamUnavailable);
    expect((error as McpError).message).toBe(
      "Upstream 'shell' already has 2 per-session connections, the most it may have; try again when another session has ended",
    );
    expect(s1.isAvailable).toBe(true);
    await pool.closeOwner('s1');
    expect((await pool.connectionFor(server(), 's3')).isAvailable).toBe(true);
  });

  it('closes idle connections', async () => {
    make({ idleMs: 30, sweepEveryMs: 10 });
    const s1 = await pool.connectionFor(server(), 's1');
    // The sweep's turn, however late on a busy machine: waited for, not slept for.
    await vi.waitFor(() => expect(s1.state).toBe('stopped'), { timeout: 5_000 });
    expect([...pool.all()]).toEqual([]);
  });

  it('keeps a connection when only its pinned roots change, and replaces it when the server does', async () => {
    make();
    const pinned = server({ roots: [{ uri: 'file:///a' }] });
    const first = await pool.connectionFor(pinned, 's1');
    pool.refresh([server({ roots: [{ uri: 'file:///b' }] })]);
    expect(await pool.connectionFor(server({ roots: [{ uri: 'file:///b' }] }), 's1')).toBe(first);
    pool.refresh([server({ roots: [{ uri: 'file:///b' }], args: ['--v2'] })]);
    expect(pool.existing('shell', 's1')).toBeUndefined();
    await new Promise((r) => setImmediate(r));
    expect(first.state).toBe('stopped');
    await pool.connectionFor(server(), 's2');
    pool.refresh([server({ isolation: 'shared' })]);
    expect([...pool.all()]).toEqual([]);
  });
});
