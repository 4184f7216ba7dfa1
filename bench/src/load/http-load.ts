import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import {
  INITIALIZE,
  INITIALIZED_NOTIFICATION,
  PROTOCOL_VERSION,
  outcomeOf,
  requestBody,
  type CallOutcome,
  type McpCaller,
  type RpcRequest,
} from './jsonrpc.js';
import { findResponse } from './sse.js';

/**
 * The HTTP load client: node:http with a keep-alive agent and nothing else, so the
 * client spends as little CPU as possible next to the processes being measured (the
 * SDK client validates every message with zod, which would be most of the client's
 * cost). Each session is one MCP Streamable HTTP session.
 */

/** A call that gets no answer within this long fails instead of stalling its worker forever. */
const REQUEST_TIMEOUT_MS = 30_000;

interface HttpReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function send(
  url: URL,
  agent: Agent,
  method: 'POST' | 'DELETE',
  headers: Record<string, string>,
  body: string | undefined,
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method,
        agent,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        // Reading to the end (rather than stopping at the matching SSE event) returns
        // the socket to the keep-alive pool; servers end a POST's stream after its response.
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no response within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** One MCP session over Streamable HTTP; requests on it are strictly sequential per worker. */
export class HttpMcpSession implements McpCaller {
  private nextId = 1;
  private headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  sessionId: string | undefined;

  constructor(
    private readonly url: URL,
    private readonly agent: Agent,
  ) {}

  /** initialize + notifications/initialized; afterwards every request carries the session headers. */
  async open(): Promise<void> {
    const id = this.nextId++;
    const reply = await send(this.url, this.agent, 'POST', this.headers, requestBody(id, INITIALIZE));
    const outcome = this.outcomeOf(reply, id);
    if (!outcome.ok) throw new Error(`initialize failed: ${outcome.error}`);
    const sessionId = reply.headers['mcp-session-id'];
    if (typeof sessionId !== 'string') throw new Error('initialize response carried no mcp-session-id header');
    this.sessionId = sessionId;
    const negotiated = outcome.result['protocolVersion'];
    this.headers = {
      ...this.headers,
      'mcp-session-id': sessionId,
      'mcp-protocol-version': typeof negotiated === 'string' ? negotiated : PROTOCOL_VERSION,
    };
    const ack = await send(this.url, this.agent, 'POST', this.headers, INITIALIZED_NOTIFICATION);
    if (ack.status !== 202 && ack.status !== 200) throw new Error(`notifications/initialized answered HTTP ${ack.status}`);
  }

  async call(request: RpcRequest): Promise<CallOutcome> {
    const id = this.nextId++;
    try {
      const reply = await send(this.url, this.agent, 'POST', this.headers, requestBody(id, request));
      return this.outcomeOf(reply, id);
    } catch (error) {
      return { ok: false, error: `transport: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  /** Ends the session (DELETE); best effort, the target may already be gone. */
  async close(): Promise<void> {
    if (this.sessionId === undefined) return;
    await send(this.url, this.agent, 'DELETE', this.headers, undefined).catch(() => undefined);
    this.sessionId = undefined;
  }

  private outcomeOf(reply: HttpReply, id: number): CallOutcome {
    const response = findResponse(reply.headers['content-type'], reply.body, id);
    if (response === undefined) {
      return { ok: false, error: `HTTP ${reply.status}, no response to id ${id}: ${reply.body.slice(0, 200)}` };
    }
    return outcomeOf(response);
  }
}

/**
 * The sessions one target's load runs over: opened on demand up to the largest
 * concurrency asked for, then reused by every later window, so session set-up cost
 * and memory do not churn between windows.
 */
export class HttpSessionPool {
  private readonly agent = new Agent({ keepAlive: true });
  private readonly sessions: HttpMcpSession[] = [];

  constructor(readonly url: URL) {}

  async callers(count: number): Promise<McpCaller[]> {
    const missing = count - this.sessions.length;
    if (missing > 0) {
      const opened = await Promise.all(
        Array.from({ length: missing }, async () => {
          const session = new HttpMcpSession(this.url, this.agent);
          await session.open();
          return session;
        }),
      );
      this.sessions.push(...opened);
    }
    return this.sessions.slice(0, count);
  }

  async close(): Promise<void> {
    await Promise.all(this.sessions.map((session) => session.close()));
    this.sessions.length = 0;
    this.agent.destroy();
  }
}

/**
 * Opens count sessions and leaves them idle (the idle-sessions scenario). The
 * keep-alive sockets are closed afterwards: an idle MCP session needs none.
 */
export async function openIdleSessions(url: URL, count: number, parallel = 8): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: parallel });
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await new HttpMcpSession(url, agent).open();
    }
  };
  try {
    await Promise.all(Array.from({ length: parallel }, worker));
  } finally {
    agent.destroy();
  }
}
