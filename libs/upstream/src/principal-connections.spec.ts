import { loadConfig, MissingSecretsError, type RemoteServerConfig, type ServerConfig } from '@switchboard/config';
import { ErrorCode, McpError, type JsonRpcMessage, type JsonRpcRequest } from '@switchboard/core';
import { silentLogger } from '@switchboard/observability';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, afterAll, describe, expect, it, vi } from 'vitest';
import { PrincipalConnections } from './principal-connections.js';
import type { TransportFactory } from './transports/transport-factory.js';
import type { UpstreamTransport } from './transports/upstream-transport.js';

/** An upstream that answers every request with the Authorization header its connection was opened with. */
class HeaderEcho implements UpstreamTransport {
  onmessage?: (m: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (e: Error) => void;
  closed = false;
  constructor(readonly headers: Record<string, string>) {}
  async start() {}
  async send(m: JsonRpcMessage) {
    if (this.closed) throw new Error('closed');
    if (!('method' in m) || !('id' in m)) return;
    const req = m as JsonRpcRequest;
    if (req.method === 'initialize' && this.headers.Authorization === 'Bearer refused') {
      throw Object.assign(new Error('HTTP 401: token refused'), { status: 401 });
    }
    const result =
      req.method === 'initialize'
        ? { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'echo', version: '1' } }
        : { authorization: this.headers.Authorization };
    queueMicrotask(() => this.onmessage?.({ jsonrpc: '2.0', id: req.id, result }));
  }
  async close() {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}

const opened: HeaderEcho[] = [];
const factory: TransportFactory = {
  async create(config: ServerConfig) {
    const t = new HeaderEcho({ ...(config as RemoteServerConfig).headers });
    opened.push(t);
    return t;
  },
};

let dir: string;
let server: ServerConfig;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-principal-connections-'));
  const file = join(dir, 'gw.yaml');
  writeFileSync(
    file,
    'mcpServers:\n  gh:\n    url: https://example.test/mcp\n    isolation: per-principal\n    headers: { Authorization: "Bearer ${secret:TOKEN}" }\n',
  );
  server = loadConfig(file, {}).servers[0];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const secrets: Record<string, Record<string, string>> = {};
let pool: PrincipalConnections;
const make = (extra: Partial<ConstructorParameters<typeof PrincipalConnections>[0]> = {}) =>
  (pool = new PrincipalConnections({
    logger: silentLogger(),
    factory,
    client: { name: 'test', version: '1' },
    secrets: { valuesFor: (p) => secrets[p] ?? {} },
    ...extra,
  }));

afterEach(async () => {
  await pool?.stopAll();
  opened.length = 0;
  for (const key of Object.keys(secrets)) delete secrets[key];
});

describe('PrincipalConnections', () => {
  it('gives each principal a connection of their own, opened with their secret, and reuses it', async () => {
    make();
    secrets.alice = { TOKEN: 'a-1' };
    secrets.bob = { TOKEN: 'b-1' };
    const [a, b, again] = await Promise.all([
      pool.connectionFor(server, 'alice'),
      pool.connectionFor(server, 'bob'),
      pool.connectionFor(server, 'alice'),
    ]);
    expect(a).toBe(again);
    expect(a).not.toBe(b);
    expect(await a.request('tools/call', {})).toEqual({ authorization: 'Bearer a-1' });
    expect(await b.request('tools/call', {})).toEqual({ authorization: 'Bearer b-1' });
    expect(opened).toHaveLength(2);
  });

  it('names the secrets a principal lacks', async () => {
    make();
    const error = await pool.connectionFor(server, 'carol').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingSecretsError);
    expect((error as MissingSecretsError).missing).toEqual(['TOKEN']);
    expect(opened).toHaveLength(0);
  });

  it("replaces a connection when the principal's secret changes", async () => {
    make();
    secrets.alice = { TOKEN: 'a-1' };
    const first = await pool.connectionFor(server, 'alice');
    secrets.alice = { TOKEN: 'a-2' };
    pool.refresh([server]);
    const second = await pool.connectionFor(server, 'alice');
    expect(second).not.toBe(first);
    expect(await second.request('tools/call', {})).toEqual({ authorization: 'Bearer a-2' });
    expect(first.state).toBe('stopped');
  });

  it('keeps the connection through an alias or timeouts change, which it then runs with', async () => {
    make();
    secrets.alice = { TOKEN: 'a-1' };
    const first = await pool.connectionFor(server, 'alice');
    const renamed = { ...server, alias: 'renamed', timeouts: { ...server.timeouts, requestMs: 1234 } };
    pool.refresh([renamed]);
    const again = await pool.connectionFor(renamed, 'alice');
    expect(again).toBe(first);
    expect(first.state).not.toBe('stopped');
    expect(first.config.alias).toBe('renamed');
    expect(first.config.timeouts.requestMs).toBe(1234);
    expect(opened).toHaveLength(1);
  });

  it('answers -32010 with the reason when the upstream refuses, and tries afresh next time', async () => {
    make();
    secrets.alice = { TOKEN: 'refused' };
    const error = await pool.connectionFor(server, 'alice').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.UpstreamUnavailable);
    expect((error as McpError).message).toContain('token refused');
    secrets.alice = { TOKEN: 'fixed' };
    const connection = await pool.connectionFor(server, 'alice');
    expect(await connection.request('tools/call', {})).toEqual({ authorization: 'Bearer fixed' });
  });

  it("releases an owner's connections (its credential no longer holds), and no one else's", async () => {
    make();
    secrets.alice = { TOKEN: 'a-1' };
    secrets.bob = { TOKEN: 'b-1' };
    const [a, b] = [await pool.connectionFor(server, 'alice'), await pool.connectionFor(server, 'bob')];
    expect(pool.release('alice')).toBe(1);
    await vi.waitFor(() => expect(a.state).toBe('stopped'));
    expect(b.state).not.toBe('stopped');
    expect([...pool.all()].map((c) => c.owner)).toEqual(['bob']);
    expect(pool.release('alice')).toBe(0);
    expect(await pool.connectionFor(server, 'alice')).not.toBe(a);
  });

  it('closes idle connections, and the least recently used one at the cap', async () => {
    make({ idleMs: 50, sweepEveryMs: 20, maxPerServer: 2 });
    for (const p of ['a', 'b', 'c']) secrets[p] = { TOKEN: p };
    // Uses are told apart, and idleness measured, by Date.now(): the test steps that clock
    // rather than sleeping on it (the sweep's timer stays real).
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const a = await pool.connectionFor(server, 'a');
      vi.advanceTimersByTime(1);
      const b = await pool.connectionFor(server, 'b');
      vi.advanceTimersByTime(1);
      expect(await pool.connectionFor(server, 'a')).toBe(a); // used again: b is now the least recently used
      vi.advanceTimersByTime(1);
      await pool.connectionFor(server, 'c'); // the cap: b goes, though a was opened before it
      expect(b.state).toBe('stopped');
      expect(a.state).not.toBe('stopped');
      expect([...pool.all()].map((c) => c.owner).sort()).toEqual(['a', 'c']);
      vi.advanceTimersByTime(50);
      // The sweep's turn, however late on a busy machine: waited for, not slept for.
      await vi.waitFor(() => expect([...pool.all()]).toEqual([]), { timeout: 5_000 });
    } finally {
      vi.useRealTimers();
    }
  });
});
