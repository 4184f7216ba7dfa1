import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeMessage, type JsonRpcMessage, type JsonRpcRequest } from '@switchboard/core';
import type { RemoteServerConfig } from '@switchboard/config';
import { silentLogger, type Logger } from '@switchboard/observability';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_MESSAGE_CHARS } from './message-limit.js';
import { MIN_RETRY_MS } from './stream-support.js';
import { StreamableHttpUpstreamTransport } from './streamable-http-transport.js';
import { DefaultTransportFactory, httpStatusOf, looksLikeLegacySse } from './transport-factory.js';

interface Seen {
  method: string;
  headers: IncomingHttpHeaders;
  body?: JsonRpcMessage;
}

type Handler = (seen: Seen, res: ServerResponse, req: IncomingMessage) => void;

/**
 * A real HTTP server scripted per test. By default it speaks enough Streamable HTTP for a
 * session: initialize answers JSON with a session id, requests answer JSON, notifications
 * 202, GET 405 and DELETE 200.
 */
class TestServer {
  readonly seen: Seen[] = [];
  onPost: Handler = (seen, res) => defaultPost(seen, res);
  onGet: Handler = (_seen, res) => res.writeHead(405).end();
  onDelete: Handler = (_seen, res) => res.writeHead(200).end();
  private readonly http: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const seen: Seen = { method: req.method!, headers: req.headers, body: text ? (JSON.parse(text) as JsonRpcMessage) : undefined };
      this.seen.push(seen);
      const handler = req.method === 'POST' ? this.onPost : req.method === 'GET' ? this.onGet : this.onDelete;
      handler(seen, res, req);
    });
  });
  url = '';

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.http.address() as AddressInfo).port}/mcp`;
    return this;
  }

  stop(): Promise<void> {
    this.http.closeAllConnections();
    return new Promise((resolve) => this.http.close(() => resolve()));
  }

  posts(): Seen[] {
    return this.seen.filter((s) => s.method === 'POST');
  }
}

function defaultPost(seen: Seen, res: ServerResponse): void {
  const message = seen.body as JsonRpcRequest;
  if (!('id' in message)) return void res.writeHead(202).end();
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (message.method === 'initialize') headers['mcp-session-id'] = 'session-1';
  res.writeHead(200, headers).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { echoed: message.method } }));
}

function sse(res: ServerResponse): ServerResponse {
  return res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

const servers: TestServer[] = [];
const transports: StreamableHttpUpstreamTransport[] = [];
/**
 * The real setTimeout, for the waits below: some tests fake the timers to see whether the
 * transport schedules a reconnection, and a wait must not add a timer of its own to them.
 */
const realSetTimeout = globalThis.setTimeout;
/** Fakes the timers a reconnection is scheduled with, so that one can be seen without waiting for it. */
const fakeTimers = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(transports.splice(0).map((t) => t.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function setup(
  configure?: (server: TestServer) => void,
  headers: Record<string, string> = {},
  logger: Logger = silentLogger(),
  redactText?: (text: string) => string,
) {
  const server = await new TestServer().start();
  servers.push(server);
  configure?.(server);
  const config = { name: 'up', transport: 'http', url: server.url, headers } as RemoteServerConfig;
  // With a redactor, made as the daemon makes it: through the factory it is given to.
  const transport = (
    redactText === undefined
      ? new StreamableHttpUpstreamTransport(config, logger)
      : await new DefaultTransportFactory({}, redactText).create(config, 'streamable-http', logger)
  ) as StreamableHttpUpstreamTransport;
  transports.push(transport);
  const messages: JsonRpcMessage[] = [];
  const errors: Error[] = [];
  let waiters: (() => void)[] = [];
  transport.onmessage = (m) => {
    messages.push(m);
    for (const w of waiters) w();
    waiters = [];
  };
  transport.onerror = (e) => errors.push(e);
  await transport.start();
  /**
   * Resolves once `count` messages have arrived, woken by each message. It has no deadline of
   * its own: messages that never come leave the test to its timeout, which is the only bound.
   */
  const received = async (count: number): Promise<JsonRpcMessage[]> => {
    while (messages.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    return messages;
  };
  return { server, transport, messages, errors, received };
}

const request = (id: number, method = 'tools/call', params?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params ? { params } : {}),
});
const initialize = (id = 1) => request(id, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
const initialized: JsonRpcMessage = { jsonrpc: '2.0', method: 'notifications/initialized' };

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => realSetTimeout(r, 10));
  }
}

describe('StreamableHttpUpstreamTransport', () => {
  it('POSTs JSON with the headers the spec asks for, and delivers a JSON answer', async () => {
    const { server, transport, received } = await setup(undefined, { Authorization: 'Bearer t0ken' });
    await transport.send(initialize());
    expect(await received(1)).toEqual([{ jsonrpc: '2.0', id: 1, result: { echoed: 'initialize' } }]);
    const [post] = server.posts();
    expect(post.headers['content-type']).toBe('application/json');
    expect(post.headers.accept).toBe('application/json, text/event-stream');
    expect(post.headers.authorization).toBe('Bearer t0ken');
    expect(post.headers['mcp-session-id']).toBeUndefined();
    expect(post.headers['mcp-protocol-version']).toBeUndefined();
  });

  it('takes the session id from the initialize answer and sends it, and the protocol version, on every later request', async () => {
    const { server, transport, received } = await setup();
    await transport.send(initialize());
    await received(1);
    expect(transport.sessionId).toBe('session-1');
    transport.setProtocolVersion('2025-06-18');
    await transport.send(initialized);
    await transport.send(request(2));
    await received(2);
    for (const post of server.posts().slice(1)) {
      expect(post.headers['mcp-session-id']).toBe('session-1');
      expect(post.headers['mcp-protocol-version']).toBe('2025-06-18');
    }
  });

  it('resolves a 202 for a notification without delivering anything', async () => {
    const { server, transport, received } = await setup();
    await transport.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
    expect(server.posts()).toHaveLength(1);
    // Whatever the 202 made the transport deliver would come before the answer to a request
    // sent after it: only that answer may be there.
    await transport.send(request(2));
    expect(await received(1)).toEqual([{ jsonrpc: '2.0', id: 2, result: { echoed: 'tools/call' } }]);
  });

  it('delivers a batch answer message by message', async () => {
    const { transport, received } = await setup((s) => {
      s.onPost = (seen, res) =>
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(
          JSON.stringify([
            { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } },
            { jsonrpc: '2.0', id: (seen.body as JsonRpcRequest).id, result: {} },
          ]),
        );
    });
    await transport.send(request(7));
    expect((await received(2)).map((m) => ('method' in m ? m.method : m.id))).toEqual(['notifications/message', 7]);
  });

  it('parses an SSE answer incrementally: several events, cut inside events, CRLF, comments, multi-line data', async () => {
    const { transport, received } = await setup((s) => {
      s.onPost = (seen, res) => {
        const id = (seen.body as JsonRpcRequest).id;
        const text =
          ': hello\r\n' +
          'event: message\r\nid: e1\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress",\r\ndata: "params":{"progressToken":1,"progress":1}}\r\n\r\n' +
          `id: e2\ndata: {"jsonrpc":"2.0","id":${id},"result":{"text":"caf\u00e9 \u{1F600}"}}\n\n`;
        // Byte-level cuts, including inside a multi-byte character and between CR and LF.
        const bytes = Buffer.from(text);
        sse(res);
        let at = 0;
        const cuts = [3, 20, 21, 60, 95, 96, bytes.length - 12, bytes.length - 10];
        const next = () => {
          const end = cuts.find((c) => c > at) ?? bytes.length;
          res.write(bytes.subarray(at, end));
          at = end;
          if (at < bytes.length) setTimeout(next, 2);
          else res.end();
        };
        next();
      };
    });
    await transport.send(request(3));
    expect(await received(2)).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
      { jsonrpc: '2.0', id: 3, result: { text: 'caf\u00e9 \u{1F600}' } },
    ]);
  });

  it('ignores SSE events of other types', async () => {
    const { transport, received } = await setup((s) => {
      s.onPost = (seen, res) => {
        sse(res).write('event: ping\ndata: {"jsonrpc":"2.0","method":"nope"}\n\n');
        res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: (seen.body as JsonRpcRequest).id, result: {} })}\n\n`);
      };
    });
    await transport.send(request(4));
    expect(await received(1)).toEqual([{ jsonrpc: '2.0', id: 4, result: {} }]);
  });

  it('rejects a 404 with an error carrying the status and the start of the body', async () => {
    const { transport } = await setup((s) => {
      s.onPost = (_seen, res) => res.writeHead(404, { 'content-type': 'application/json' }).end(`{"error":"Session not found"}${' '.repeat(500)}x`.repeat(3));
    });
    const err = await transport.send(request(5)).catch((e: unknown) => e as Error);
    expect(httpStatusOf(err)).toBe(404);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/404/);
    expect((err as Error).message).toMatch(/Session not found/);
    expect((err as Error).message.length).toBeLessThan(260);
  });

  it('rejects a 4xx to initialize so that the connection falls back to legacy SSE (but not a 401)', async () => {
    const { transport } = await setup((s) => {
      s.onPost = (_seen, res) => res.writeHead(405).end('Method not allowed');
    });
    expect(looksLikeLegacySse(await transport.send(initialize()).catch((e: unknown) => e))).toBe(true);

    const other = await setup((s) => {
      s.onPost = (_seen, res) => res.writeHead(401).end();
    });
    expect(looksLikeLegacySse(await other.transport.send(initialize()).catch((e: unknown) => e))).toBe(false);
  });

  it('rejects send() and reports an error when the server cannot be reached', async () => {
    const { server, transport, errors } = await setup();
    await server.stop();
    const err = await transport.send(request(6)).catch((e: unknown) => e as NodeJS.ErrnoException);
    expect(err?.code).toBe('ECONNREFUSED');
    expect(errors).toHaveLength(1);
  });

  it('resumes a response stream cut off mid-call with GET and Last-Event-ID, and delivers the answer', async () => {
    const { server, transport, received, errors } = await setup((s) => {
      s.onPost = (seen, res) => {
        if ((seen.body as JsonRpcRequest).method === 'initialize') return defaultPost(seen, res);
        // A priming event, one message, then the connection dies.
        sse(res).write('id: s1_0\nretry: 20\ndata:\n\n');
        res.write('id: s1_1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"before"}}\n\n');
        setTimeout(() => res.socket?.destroy(), 20);
      };
      s.onGet = (seen, res) => {
        if (seen.headers['last-event-id'] !== 's1_1') return void res.writeHead(405).end();
        sse(res).end('id: s1_2\ndata: {"jsonrpc":"2.0","id":2,"result":{"resumed":true}}\n\n');
      };
    });
    await transport.send(initialize());
    await received(1);
    await transport.send(request(2));
    const messages = await received(3);
    expect(messages.slice(1)).toEqual([
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'before' } },
      { jsonrpc: '2.0', id: 2, result: { resumed: true } },
    ]);
    const get = server.seen.find((s) => s.method === 'GET')!;
    expect(get.headers['mcp-session-id']).toBe('session-1');
    expect(get.headers.accept).toBe('text/event-stream');
    expect(errors.map((e) => e.message)).toEqual(['the upstream response stream broke off']);
  });

  it('resumes a stream the server closed on purpose after a priming event (polling), as often as it does so', async () => {
    let gets = 0;
    const { transport, received, errors } = await setup((s) => {
      s.onPost = (_seen, res) => sse(res).end('id: p_0\nretry: 10\ndata:\n\n');
      s.onGet = (seen, res) => {
        expect(seen.headers['last-event-id']).toBe('p_0');
        if (++gets < 8) return void sse(res).end();
        sse(res).end('id: p_1\ndata: {"jsonrpc":"2.0","id":9,"result":{}}\n\n');
      };
    });
    await transport.send(request(9));
    expect(await received(1)).toEqual([{ jsonrpc: '2.0', id: 9, result: {} }]);
    expect(gets).toBe(8);
    expect(errors).toEqual([]);
  });

  it('answers -32000 for a request whose stream ends without event ids before its response, rather than leaving the request open', async () => {
    const { transport, received, errors } = await setup((s) => {
      s.onPost = (_seen, res) => {
        sse(res).write('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n');
        setTimeout(() => res.socket?.destroy(), 10);
      };
    });
    await transport.send(request(11));
    // The transport has no timeout of its own: a request it left open would stay unanswered,
    // and this test would run into its timeout.
    const messages = await received(2);
    expect(messages[1]).toEqual({
      jsonrpc: '2.0',
      id: 11,
      error: { code: -32000, message: 'Upstream closed the response stream before answering' },
    });
    expect(errors).toHaveLength(1);
  });

  it('answers -32000 when resumption keeps failing', async () => {
    const { transport, received } = await setup((s) => {
      s.onPost = (_seen, res) => sse(res).end('id: q_0\nretry: 5\ndata:\n\n');
      s.onGet = (_seen, res) => res.writeHead(503).end();
    });
    await transport.send(request(12));
    const [message] = await received(1);
    expect(message).toMatchObject({ id: 12, error: { code: -32000 } });
  });

  it('stops following a stream whose request was cancelled', async () => {
    let closedByClient = false;
    const { transport, server } = await setup((s) => {
      s.onPost = (seen, res, req) => {
        if ((seen.body as { method: string }).method === 'notifications/cancelled') return void res.writeHead(202).end();
        sse(res).write('id: c_0\ndata:\n\n');
        req.socket.on('close', () => (closedByClient = true));
      };
    });
    // A resumption would come on a timer, 0.5 s after the stream closed: faked, it is seen
    // as soon as it is scheduled. The stream's close is handled before the cancellation's
    // POST is answered.
    fakeTimers();
    await transport.send(request(13));
    await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 13 } });
    await until(() => closedByClient);
    expect(vi.getTimerCount()).toBe(0);
    expect(server.seen.filter((s) => s.method === 'GET')).toEqual([]);
  });

  it('stops resuming a stream whose request was cancelled during the resumption', async () => {
    const { transport, server, messages } = await setup((s) => {
      s.onPost = (seen, res) => {
        if ((seen.body as { method: string }).method === 'notifications/cancelled') return void res.writeHead(202).end();
        sse(res).end('id: r_0\nretry: 10\ndata:\n\n');
      };
      s.onGet = () => undefined; // never answers
    });
    const gets = () => server.seen.filter((s) => s.method === 'GET').length;
    await transport.send(request(14));
    await until(() => gets() === 1);
    // Another resumption would come on a timer once the aborted GET failed (0.25 s later):
    // faked, it is seen as soon as it is scheduled. The GET's failure is handled before the
    // cancellation's POST is answered.
    fakeTimers();
    await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 14 } });
    expect(vi.getTimerCount()).toBe(0);
    expect(gets()).toBe(1);
    // Nothing is owed any more: no -32000 for the abandoned request either.
    expect(messages).toEqual([]);
  });

  it(`reopens a GET stream that a server ends at once with retry: 0 no sooner than ${MIN_RETRY_MS} ms later, every time`, async () => {
    const opened: number[] = [];
    const { transport } = await setup((s) => {
      s.onGet = (_seen, res) => {
        opened.push(Date.now());
        // Connected, so no failure counts and no backoff builds up; then gone at once.
        sse(res).end('retry: 0\n\n');
      };
    });
    await transport.send(initialize());
    await transport.send(initialized);
    await until(() => opened.length >= 4, 10_000);
    // A lower bound on the time between them: a loaded machine only makes the gaps longer.
    // Timers may fire a millisecond early against Date.now().
    const gaps = opened.slice(1, 4).map((at, i) => at - opened[i]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(MIN_RETRY_MS - 2);
  });

  it('opens the standalone GET stream after notifications/initialized and delivers what it carries', async () => {
    const { server, transport, received } = await setup((s) => {
      s.onGet = (seen, res) => {
        if (seen.headers['last-event-id'] === undefined) {
          // The first connection ends; the transport must come back with the last id.
          return void sse(res).end('id: g_1\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n');
        }
        sse(res).write(`id: g_2\ndata: {"jsonrpc":"2.0","id":"srv-1","method":"ping"}\n\n`);
      };
    });
    await transport.send(initialize());
    transport.setProtocolVersion('2025-11-25');
    await transport.send(initialized);
    const messages = await received(3);
    expect(messages.slice(1)).toEqual([
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
      { jsonrpc: '2.0', id: 'srv-1', method: 'ping' },
    ]);
    const gets = server.seen.filter((s) => s.method === 'GET');
    expect(gets.map((g) => g.headers['last-event-id'])).toEqual([undefined, 'g_1']);
    expect(gets[0].headers.accept).toBe('text/event-stream');
    expect(gets[0].headers['mcp-session-id']).toBe('session-1');
    expect(gets[0].headers['mcp-protocol-version']).toBe('2025-11-25');
  });

  it('accepts a 405 to the standalone GET (no stream offered) without errors or retries', async () => {
    const { server, transport, received, errors } = await setup();
    // A retry would come on a timer, 0.5 s after the 405: faked, it is seen as soon as it is scheduled.
    fakeTimers();
    await transport.send(initialize());
    await transport.send(initialized);
    await until(() => server.seen.some((s) => s.method === 'GET'));
    // The 405 was written before this request was sent, so the transport read it first.
    await transport.send(request(2));
    await received(2);
    expect(vi.getTimerCount()).toBe(0);
    expect(server.seen.filter((s) => s.method === 'GET')).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('close() aborts open streams, ends the session with DELETE, and calls onclose once', async () => {
    let streamClosed = false;
    const { server, transport } = await setup((s) => {
      s.onGet = (_seen, res, req) => {
        sse(res).write(': open\n\n');
        req.socket.on('close', () => (streamClosed = true));
      };
    });
    let closes = 0;
    transport.onclose = () => closes++;
    await transport.send(initialize());
    await transport.send(initialized);
    await until(() => server.seen.some((s) => s.method === 'GET'));
    await transport.close();
    await transport.close();
    const del = server.seen.find((s) => s.method === 'DELETE');
    expect(del?.headers['mcp-session-id']).toBe('session-1');
    expect(closes).toBe(1);
    await until(() => streamClosed);
    await expect(transport.send(request(3))).rejects.toThrow(/closed/);
  });

  it('close() does not wait long for a server that does not answer the DELETE', async () => {
    const { transport } = await setup((s) => {
      s.onDelete = () => undefined;
    });
    await transport.send(initialize());
    // The DELETE is given up after 1 s; without that, close() would never return and this
    // test would run into its timeout.
    await transport.close();
  });

  it('keeps the text of a large result, in a JSON answer and in an SSE event, so encoding splices it', async () => {
    // Spacing JSON.stringify would not produce: only a spliced text keeps it.
    const resultText = `{ "content": [ { "type": "text", "text": "${'y'.repeat(5000)}" } ] }`;
    const { transport, received } = await setup((s) => {
      s.onPost = (seen, res) => {
        const body = `{"jsonrpc":"2.0","id":${(seen.body as JsonRpcRequest).id},"result":${resultText}}`;
        if ((seen.body as JsonRpcRequest).id === 1) res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        else sse(res).end(`data: ${body}\n\n`);
      };
    });
    await transport.send(request(1));
    await transport.send(request(2));
    const messages = await received(2);
    for (const message of messages) {
      expect(encodeMessage(message)).toBe(`{"jsonrpc":"2.0","id":${(message as { id: number }).id},"result":${resultText}}`);
    }
  });

  it('follows a same-origin 307 (an endpoint mounted at /mcp/) and keeps using the new path', async () => {
    const paths: string[] = [];
    const { transport, received } = await setup((s) => {
      s.onPost = (seen, res, req) => {
        paths.push(req.url!);
        if (req.url === '/mcp') return void res.writeHead(307, { location: '/mcp/' }).end();
        defaultPost(seen, res);
      };
    });
    await transport.send(initialize());
    await transport.send(request(2));
    expect(await received(2)).toHaveLength(2);
    expect(paths).toEqual(['/mcp', '/mcp/', '/mcp/']);
  });

  it('does not follow a redirect to another origin', async () => {
    const { transport } = await setup((s) => {
      s.onPost = (_seen, res) => res.writeHead(307, { location: 'http://example.invalid/mcp' }).end();
    });
    const err = await transport.send(initialize()).catch((e: unknown) => e);
    expect(httpStatusOf(err)).toBe(307);
  });

  it('reuses connections (keep-alive)', async () => {
    const { server, transport, received } = await setup();
    const ports = new Set<number>();
    server.onPost = (seen, res, req) => {
      ports.add(req.socket.remotePort!);
      defaultPost(seen, res);
    };
    for (let i = 1; i <= 5; i++) {
      await transport.send(request(i));
      await received(i);
    }
    expect(ports.size).toBe(1);
  });

  it('logs the start of an answer JSON-RPC does not allow redacted, as a stdio upstream\'s stray output is', async () => {
    const raw: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void raw.push(line) });
    const token = `tok_${'s3cr3t'.repeat(6)}`;
    const { transport, received } = await setup(
      (s) => {
        s.onPost = (seen, res) => {
          if ((seen.body as JsonRpcRequest).id === 1) return defaultPost(seen, res);
          // An error whose code is a string: not JSON-RPC, and it echoes the call's credential.
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: 2, error: { code: '401', message: `token ${token} was refused` } }));
        };
      },
      {},
      logger,
      (text) => text.replaceAll(token, '[REDACTED:test]'),
    );
    await transport.send(initialize());
    await transport.send(request(2));
    await received(2);
    const warning = raw.map((l) => JSON.parse(l) as { msg: string; message?: string }).find((e) => /not a JSON-RPC message/.test(e.msg));
    expect(warning?.message).toContain('token [REDACTED:test] was refused');
    expect(raw.join('\n')).not.toContain(token);
  });

  it('closes the session on a message over the size limit (an endless SSE event or JSON body), logging its size but not its content', async () => {
    const chunk = 'x'.repeat(1 << 20);
    /** Writes `head`, then chunks for as long as the client reads them. */
    const flood = (res: ServerResponse, head: string) => {
      res.write(head);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    };
    for (const type of ['text/event-stream', 'application/json']) {
      const raw: string[] = [];
      const logger = pino({ level: 'debug' }, { write: (line: string) => void raw.push(line) });
      const { transport } = await setup(
        (s) => {
          s.onPost = (seen, res) => {
            if ((seen.body as JsonRpcRequest).id === 1) return defaultPost(seen, res);
            res.writeHead(200, { 'content-type': type });
            flood(res, type === 'application/json' ? '{"jsonrpc":"2.0","id":2,"result":{"text":"' : 'data: {"jsonrpc":"2.0","id":2,"result":{"text":"');
          };
        },
        {},
        logger,
      );
      let closes = 0;
      transport.onclose = () => closes++;
      await transport.send(initialize());
      await transport.send(request(2));
      await until(() => closes === 1);
      expect(transport.closeReason()).toMatch(/over the limit of \d+ characters/);
      const error = raw.map((l) => JSON.parse(l) as { level: number; msg: string; chars: number }).find((e) => e.level === 50);
      expect(error?.msg, type).toMatch(/over the size limit/);
      expect(error?.chars).toBeGreaterThan(MAX_MESSAGE_CHARS);
      expect(raw.some((l) => l.includes('xxxxxxxx'))).toBe(false);
    }
  });
});
