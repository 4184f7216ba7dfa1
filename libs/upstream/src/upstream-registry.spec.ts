import type { ServerConfig, StdioServerConfig } from '@switchboard/config';
import { McpError, type JsonRpcMessage, type JsonRpcRequest } from '@switchboard/core';
import { silentLogger } from '@switchboard/observability';
import { afterEach, describe, expect, it } from 'vitest';
import type { TransportFactory } from './transports/transport-factory.js';
import type { UpstreamTransport } from './transports/upstream-transport.js';
import { UpstreamRegistry } from './upstream-registry.js';

/** An upstream whose `slow` requests are answered only when the test says so. */
class HeldUpstream implements UpstreamTransport {
  onmessage?: (m: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (e: Error) => void;
  closed = false;
  readonly held: JsonRpcRequest[] = [];
  async start() {}
  async send(m: JsonRpcMessage) {
    if (this.closed) throw new Error('closed');
    if (!('method' in m) || !('id' in m)) return;
    const req = m as JsonRpcRequest;
    if (req.method === 'slow') {
      this.held.push(req);
      return;
    }
    const result =
      req.method === 'initialize'
        ? { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'held', version: '1' } }
        : {};
    queueMicrotask(() => this.onmessage?.({ jsonrpc: '2.0', id: req.id, result }));
  }
  release() {
    for (const req of this.held.splice(0)) this.onmessage?.({ jsonrpc: '2.0', id: req.id, result: { done: true } });
  }
  async close() {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}

const opened: HeldUpstream[] = [];
const factory: TransportFactory = {
  async create() {
    const t = new HeldUpstream();
    opened.push(t);
    return t;
  },
};

const server = (extra: Partial<StdioServerConfig> = {}): ServerConfig => ({
  name: 'fx',
  transport: 'stdio',
  command: 'node',
  args: ['fixture.js'],
  env: { MARK: '1' },
  timeouts: { connectMs: 1000, requestMs: 1000, maxRequestMs: 5000 },
  lists: { maxItems: 100, maxBytes: 65536 },
  enabled: true,
  pin: 'strict',
  isolation: 'shared',
  ...extra,
});

let registry: UpstreamRegistry;
afterEach(async () => {
  await registry?.stopAll();
  opened.length = 0;
});

async function ready(name = 'fx') {
  for (let i = 0; i < 100 && !registry.get(name)?.isAvailable; i++) await new Promise((r) => setTimeout(r, 5));
  const connection = registry.get(name);
  expect(connection?.isAvailable).toBe(true);
  return connection!;
}

async function started(config: ServerConfig) {
  registry = new UpstreamRegistry({ logger: silentLogger(), factory, client: { name: 'test', version: '1' } });
  await registry.apply([config]);
  return ready(config.name);
}

describe('UpstreamRegistry.apply', () => {
  it('applies alias, namespace, pin, timeouts and pinned-roots changes in place: the call in flight goes on', async () => {
    const connection = await started(server({ roots: [{ uri: 'file:///a' }] }));
    const call = connection.request('slow', {});
    await new Promise((r) => setTimeout(r, 5));
    expect(opened[0]!.held).toHaveLength(1);

    const next = server({
      alias: 'ff',
      namespace: 'none',
      pin: 'warn',
      timeouts: { connectMs: 2000, requestMs: 3000, maxRequestMs: 9000 },
      roots: [{ uri: 'file:///b' }],
    });
    expect(await registry.apply([next])).toEqual({ added: [], removed: [], changed: [], updated: ['fx'] });

    expect(registry.get('fx')).toBe(connection);
    // Read where used: the next request's timeouts, the alias in instructions, and so on.
    expect(connection.config).toBe(next);
    expect(connection.state).toBe('ready');
    expect(opened).toHaveLength(1);
    opened[0]!.release();
    await expect(call).resolves.toEqual({ done: true });
  });

  it('restarts a server whose connection changed (its env): the call in flight fails, a new connection runs', async () => {
    const connection = await started(server());
    const call = connection.request('slow', {});
    const outcome = call.then(
      () => 'answered',
      (err: unknown) => (err instanceof McpError ? err.message : String(err)),
    );
    expect(await registry.apply([server({ env: { MARK: '2' } })])).toEqual({
      added: [],
      removed: [],
      changed: ['fx'],
      updated: [],
    });
    expect(await outcome).toBe("Upstream 'fx' was stopped");
    const restarted = await ready();
    expect(restarted).not.toBe(connection);
    expect(restarted.config).toMatchObject({ env: { MARK: '2' } });
    expect(opened).toHaveLength(2);
  });

  it('a server changed and then only renamed while it stops starts with the latest config', async () => {
    await started(server());
    const first = registry.apply([server({ env: { MARK: '2' } })]);
    const renamed = server({ env: { MARK: '2' }, alias: 'ff' });
    const second = registry.apply([renamed]);
    await Promise.all([first, second]);
    const connection = await ready();
    expect(connection.config).toBe(renamed);
    expect(opened).toHaveLength(2);
  });
});
