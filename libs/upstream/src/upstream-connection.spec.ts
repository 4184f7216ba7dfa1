import type { JsonRpcMessage, JsonRpcRequest } from '@switchboard/core';
import type { ServerConfig } from '@switchboard/config';
import { silentLogger } from '@switchboard/observability';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STAYED_UP_MS } from './backoff.js';
import { DefaultTransportFactory, type RemoteFlavour, type TransportFactory } from './transports/transport-factory.js';
import type { UpstreamTransport } from './transports/upstream-transport.js';
import { UpstreamConnection } from './upstream-connection.js';
import type { UpstreamState } from './upstream.types.js';

/** An in-memory MCP server behind the transport port, scriptable per test. */
class FakeServer {
  protocolVersion = '2025-06-18';
  /** Flavours that answer initialize with HTTP 404 (to exercise the SSE fallback). */
  refuse = new Set<RemoteFlavour | undefined>();
  /** Fail the next N non-initialize requests with an HTTP 404 (session expired). */
  expireNext = 0;
  /** Never answer initialize (a server that accepts connections and hangs). */
  hang = false;
  /** Fail non-initialize requests with this HTTP status (an error page). */
  failStatus?: number;
  opened: (RemoteFlavour | undefined)[] = [];
  transports: FakeTransport[] = [];
  handle(req: JsonRpcRequest, t: FakeTransport): Record<string, unknown> {
    if (req.method === 'initialize') return { protocolVersion: this.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1' } };
    return { echoed: req.method, session: t.sessionNo };
  }
}

class FakeTransport implements UpstreamTransport {
  onmessage?: (m: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (e: Error) => void;
  closed = false;
  constructor(
    private readonly server: FakeServer,
    readonly flavour: RemoteFlavour | undefined,
    readonly sessionNo: number,
  ) {}
  async start() {}
  async send(m: JsonRpcMessage) {
    if (this.closed) throw new Error('closed');
    if (!('method' in m) || !('id' in m)) return;
    const req = m as JsonRpcRequest;
    if (req.method === 'initialize' && this.server.refuse.has(this.flavour)) throw Object.assign(new Error('404'), { status: 404 });
    if (req.method !== 'initialize' && this.server.expireNext > 0) {
      this.server.expireNext--;
      throw Object.assign(new Error('session gone'), { status: 404 });
    }
    if (req.method === 'initialize' && this.server.hang) return;
    if (req.method !== 'initialize' && this.server.failStatus) {
      throw Object.assign(new Error(`upstream answered HTTP ${this.server.failStatus}: <html>secret stack</html>`), { status: this.server.failStatus });
    }
    const result = this.server.handle(req, this);
    queueMicrotask(() => this.onmessage?.({ jsonrpc: '2.0', id: req.id, result }));
  }
  async close() {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
  /** The server process died. */
  die() {
    this.closed = true;
    this.onclose?.();
  }
}

function setup(config: Partial<ServerConfig> = {}, factoryOverride?: TransportFactory, healthIntervalMs?: number) {
  const server = new FakeServer();
  const factory: TransportFactory = factoryOverride ?? {
    create: (_c, flavour) => {
      server.opened.push(flavour);
      const t = new FakeTransport(server, flavour, server.transports.length + 1);
      server.transports.push(t);
      return t;
    },
  };
  const states: UpstreamState[] = [];
  const connection = new UpstreamConnection(
    {
      name: 'up',
      transport: 'http',
      url: 'http://127.0.0.1:1/mcp',
      headers: {},
      enabled: true,
      timeouts: { connectMs: 1000, requestMs: 1000, maxRequestMs: 5000 },
      ...config,
    } as ServerConfig,
    { logger: silentLogger(), factory, client: { name: 't', version: '1' }, listener: { stateChanged: (_s, st) => states.push(st) }, healthIntervalMs },
  );
  connections.push(connection);
  return { server, connection, states };
}

const connections: UpstreamConnection[] = [];
afterEach(async () => {
  await Promise.all(connections.splice(0).map((c) => c.stop()));
});

const until = async (check: () => boolean) => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
};

describe('UpstreamConnection', () => {
  it('connects, initializes and reports ready with the negotiated version', async () => {
    const { connection, states } = setup();
    connection.start();
    await until(() => connection.state === 'ready');
    expect(states).toEqual(['connecting', 'ready']);
    expect(connection.protocolVersion).toBe('2025-06-18');
    expect(connection.status()).toMatchObject({ transport: 'streamable-http', serverInfo: { name: 'fake' } });
  });

  it('falls back to HTTP+SSE when Streamable HTTP answers initialize with a 4xx, and remembers it', async () => {
    const { connection, server } = setup();
    server.refuse.add('streamable-http');
    connection.start();
    await until(() => connection.state === 'ready');
    expect(server.opened).toEqual(['streamable-http', 'sse']);
    expect(connection.status().transport).toBe('sse');
    server.transports.at(-1)!.die();
    await until(() => server.opened.length === 3 && connection.state === 'ready');
    expect(server.opened[2]).toBe('sse');
  });

  it('fails fast with -32010 while down', async () => {
    const { connection } = setup();
    await expect(connection.request('tools/list', undefined)).rejects.toMatchObject({ code: -32010 });
  });

  it('refuses an upstream that picks a protocol version it does not speak', async () => {
    const { connection, server } = setup();
    server.protocolVersion = '1999-01-01';
    connection.start();
    await until(() => connection.state === 'down');
    expect(connection.status().lastError).toMatch(/1999-01-01/);
  });

  it('a 404 on a request re-initializes the session and sends the request once more', async () => {
    const { connection, server } = setup();
    connection.start();
    await until(() => connection.state === 'ready');
    server.expireNext = 1;
    const result = await connection.request('tools/list', undefined);
    expect(result).toEqual({ echoed: 'tools/list', session: 2 });
    expect(server.transports[0].closed).toBe(true);
  });

  it('a closed connection fails in-flight requests with -32000 and reconnects with backoff', async () => {
    const { connection, server, states } = setup();
    connection.start();
    await until(() => connection.state === 'ready');
    const t = server.transports[0];
    // A request the server never answers, then the server dies.
    const pending = connection.request('slow', undefined);
    t.onmessage = () => undefined;
    t.die();
    await expect(pending).rejects.toMatchObject({ code: -32000 });
    await until(() => connection.state === 'ready' && server.transports.length === 2);
    expect(states).toEqual(['connecting', 'ready', 'down', 'connecting', 'ready']);
  });

  it('an upstream that dies soon after each handshake keeps backing off, until it stays up', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    try {
      const { connection, server } = setup();
      connection.start();
      await vi.advanceTimersByTimeAsync(0);
      expect(connection.state).toBe('ready');
      // First loss: retried after backoffDelay(0), 200-300 ms.
      server.transports.at(-1)!.die();
      expect(connection.status()).toMatchObject({ state: 'down', reconnectAttempts: 1 });
      await vi.advanceTimersByTimeAsync(300);
      expect(connection.state).toBe('ready');
      // It dies again at once: that reconnect did not count as a success, so the delay doubles
      // (400-600 ms) instead of starting again at 200-300 ms.
      server.transports.at(-1)!.die();
      expect(connection.status()).toMatchObject({ state: 'down', reconnectAttempts: 2 });
      await vi.advanceTimersByTimeAsync(350);
      expect(connection.state).toBe('down');
      expect(server.transports).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(250);
      expect(connection.status()).toMatchObject({ state: 'ready', reconnectAttempts: 2 });
      // Up for long enough: the failures are forgotten.
      await vi.advanceTimersByTimeAsync(STAYED_UP_MS);
      expect(connection.status()).toMatchObject({ state: 'ready', reconnectAttempts: 0 });
      server.transports.at(-1)!.die();
      await vi.advanceTimersByTimeAsync(300);
      expect(connection.status()).toMatchObject({ state: 'ready', reconnectAttempts: 1 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('an HTTP error status on a request is named in the -32000, and the body stays out of it', async () => {
    const { connection, server } = setup();
    connection.start();
    await until(() => connection.state === 'ready');
    server.failStatus = 500;
    const err = await connection.request('tools/call', { name: 't' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: -32000, message: "Upstream 'up' answered HTTP 500" });
    expect(JSON.stringify(err)).not.toMatch(/secret|html/);
  });

  it('stop() closes the transport and ends in stopped', async () => {
    const { connection, server } = setup();
    connection.start();
    await until(() => connection.state === 'ready');
    await connection.stop();
    expect(connection.state).toBe('stopped');
    expect(server.transports[0].closed).toBe(true);
    await expect(connection.request('x', undefined)).rejects.toMatchObject({ code: -32010 });
  });

  it('stop() does not wait for a handshake that never answers', async () => {
    const { connection, server, states } = setup({ timeouts: { connectMs: 60_000, requestMs: 1000, maxRequestMs: 5000 } });
    server.hang = true;
    connection.start();
    await until(() => connection.state === 'connecting' && server.transports.length === 1);
    // A stop() that waited for the handshake would wait out connectMs (60 s), past this
    // test's own timeout (10 s): that is the failure, no clock needed.
    await connection.stop();
    expect(connection.state).toBe('stopped');
    // Ended on purpose, not failed: never `down` on the way, and no lastError to report.
    expect(states).toEqual(['connecting', 'stopped']);
    expect(connection.status().lastError).toBeUndefined();
    expect(server.transports[0].closed).toBe(true);
  });

  it('a stdio child that exits on start fails the attempt at once, with its exit status', async () => {
    const { connection } = setup(
      {
        transport: 'stdio',
        command: process.execPath,
        args: ['-e', 'process.exit(3)'],
        env: {},
        timeouts: { connectMs: 60_000, requestMs: 1000, maxRequestMs: 5000 },
      } as Partial<ServerConfig>,
      new DefaultTransportFactory(),
    );
    connection.start();
    await until(() => connection.state === 'down');
    expect(connection.status().lastError).toMatch(/exited with code 3/);
    expect(connection.status().reconnectAttempts).toBe(1);
  });

  it('a connected stdio upstream that exits is reported with its exit status', async () => {
    const child = `process.stdin.once('data', (d) => {
      const { id } = JSON.parse(String(d).split('\\n')[0]);
      const result = { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'x', version: '1' } };
      process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result }) + '\\n');
      setTimeout(() => process.exit(4), 200);
    });`;
    const { connection, states } = setup(
      { transport: 'stdio', command: process.execPath, args: ['-e', child], env: {} } as Partial<ServerConfig>,
      new DefaultTransportFactory(),
    );
    connection.start();
    await until(() => states.includes('ready') && connection.state !== 'ready');
    expect(connection.status().lastError).toBe('the connection closed (the process exited with code 4)');
    // A list read that failed with the connection (catalog-sync reports it) does not hide why it went down.
    connection.reportTrouble('tools/list failed');
    expect(connection.status().lastError).toBe('the connection closed (the process exited with code 4)');
  });

  it('a stdio child whose stdin closes before it exits is reported with its exit status, not the EPIPE of a write', async () => {
    // It answers initialize after closing its stdin, so our next write (notifications/initialized)
    // fails with EPIPE a while before the process exits.
    const child = `process.stdin.once('data', (d) => {
      const { id } = JSON.parse(String(d).split('\\n')[0]);
      process.stdin.destroy();
      require('node:fs').closeSync(0); // libuv never closes fds 0-2 itself
      const result = { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'x', version: '1' } };
      process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result }) + '\\n');
      setTimeout(() => process.exit(3), 300);
    });`;
    const { connection } = setup(
      {
        transport: 'stdio',
        command: process.execPath,
        args: ['-e', child],
        env: {},
        timeouts: { connectMs: 60_000, requestMs: 1000, maxRequestMs: 5000 },
      } as Partial<ServerConfig>,
      new DefaultTransportFactory(),
    );
    connection.start();
    await until(() => connection.state === 'down');
    expect(connection.status().lastError).toMatch(/exited with code 3/);
  });

  it('an upstream that answers ping with an error is alive: it is not dropped, nor marked degraded', async () => {
    // Answers initialize and `count` (the pings it got), and every ping with -32601, as a
    // server that never implemented ping does.
    const child = `let pings = 0;
    require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
      const m = JSON.parse(line);
      if (m.id === undefined) return;
      const send = (r) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...r }) + '\\n');
      if (m.method === 'initialize') return send({ result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'x', version: '1' } } });
      if (m.method === 'count') return send({ result: { pings } });
      if (m.method === 'ping') pings++;
      send({ error: { code: -32601, message: 'Method not found' } });
    });`;
    const { connection, states } = setup(
      { transport: 'stdio', command: process.execPath, args: ['-e', child], env: {} } as Partial<ServerConfig>,
      new DefaultTransportFactory(),
      20,
    );
    connection.start();
    let pings = 0;
    for (let i = 0; i < 400 && pings < 5; i++) {
      await new Promise((r) => setTimeout(r, 10));
      pings = ((await connection.request('count', undefined).catch(() => ({ pings: 0 }))) as { pings: number }).pings;
    }
    expect(pings).toBeGreaterThanOrEqual(5);
    // Before, two such answers in a row were taken for a dead connection: it was dropped,
    // with whatever calls it ran, and the server started again.
    expect(states).toEqual(['connecting', 'ready']);
  });
});
