/**
 * The conformance fixture over Streamable HTTP: `node dist/conformance/conformance-http.js`
 * serves POST/GET/DELETE /mcp on 127.0.0.1:PORT with stateful sessions (one
 * server instance each), resumable SSE streams (an in-memory event store and
 * a retry hint), and DNS-rebinding protection (only loopback Host and Origin
 * headers), then prints `LISTENING <port>`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { localhostHostValidation, localhostOriginValidation, NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { isInitializeRequest } from '@modelcontextprotocol/server';
import { listenAndAnnounce, readJsonBody, sendJsonRpcError, sendText } from '../fixtures/http-support.js';
import { createConformanceServer } from './conformance-server.js';
import { InMemoryEventStore } from './event-store.js';

/** The SSE `retry` hint, in ms, a client waits before resuming a closed stream. */
const RETRY_MS = 500;

const sessions = new Map<string, NodeStreamableHTTPServerTransport>();
const validHost = localhostHostValidation();
const validOrigin = localhostOriginValidation();
const log = (message: string) => process.stderr.write(`conformance fixture: ${message}\n`);

const http = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    log(`request failed: ${String(error)}`);
    if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal server error');
    else res.end();
  });
});

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  // Both guards answer 403 themselves.
  if (!validHost(req, res) || !validOrigin(req, res)) return;
  const { pathname } = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (pathname !== '/mcp') return sendText(res, 404, 'Not found');

  const sessionId = req.headers['mcp-session-id'];
  if (typeof sessionId === 'string') {
    const transport = sessions.get(sessionId);
    if (!transport) return sendJsonRpcError(res, 404, -32001, 'Session not found');
    return transport.handleRequest(req, res);
  }
  if (req.method !== 'POST') return sendJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');

  const body = await readJsonBody(req);
  if (!body.ok) return sendJsonRpcError(res, 400, -32700, 'Parse error');
  if (!isInitializeRequest(body.value)) {
    return sendJsonRpcError(res, 400, -32000, 'Bad Request: no valid session id and not an initialize request');
  }
  const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    eventStore: new InMemoryEventStore(),
    retryInterval: RETRY_MS,
    onsessioninitialized: (id) => {
      sessions.set(id, transport);
    },
    onsessionclosed: (id) => {
      sessions.delete(id);
    },
  });
  const server = createConformanceServer();
  server.onerror = (error) => log(error.message);
  server.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
  };
  await server.connect(transport);
  await transport.handleRequest(req, res, body.value);
}

listenAndAnnounce(http, 'conformance', async () => {
  await Promise.allSettled([...sessions.values()].map((transport) => transport.close()));
});
