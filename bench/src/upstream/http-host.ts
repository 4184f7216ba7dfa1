import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { isInitializeRequest, type McpServer } from '@modelcontextprotocol/server';

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The bench upstream's Streamable HTTP host: POST/GET/DELETE /mcp, sessionful, one
 * McpServer per session, the SDK transport in its default configuration (random UUID
 * session ids, SSE responses). It mirrors the usual SDK example on purpose, so the
 * direct-http baseline is an ordinary SDK server rather than a tuned one.
 */
export function createStreamableHttpHost(newServer: () => McpServer): {
  http: HttpServer;
  closeSessions: () => Promise<void>;
} {
  const sessions = new Map<string, NodeStreamableHTTPServerTransport>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { pathname } = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (pathname !== '/mcp') return reply(res, 404, -32000, 'Not found');

    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = sessions.get(sessionId);
      if (!transport) return reply(res, 404, -32001, 'Session not found');
      return transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return reply(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');

    // Only an initialize may open a session; the body must be read to know.
    const body = await readJson(req);
    if (body === undefined) return reply(res, 400, -32700, 'Parse error');
    if (!isInitializeRequest(body)) return reply(res, 400, -32000, 'Bad Request: not an initialize request');

    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    const server = newServer();
    server.server.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      process.stderr.write(`bench upstream: request failed: ${String(error)}\n`);
      if (!res.headersSent) reply(res, 500, -32603, 'Internal server error');
      else res.end();
    });
  });
  const closeSessions = async () => {
    await Promise.allSettled([...sessions.values()].map((transport) => transport.close()));
  };
  return { http, closeSessions };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function reply(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
