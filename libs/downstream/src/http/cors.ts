import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * CORS for browser-based hosts (e.g. an inspector page on localhost). It is applied only to
 * requests that already passed the Origin check, so it never widens who may call.
 */
export function applyCors(req: IncomingMessage, res: ServerResponse): void {
  const origin = req.headers.origin;
  if (!origin) return;
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Vary', 'Origin');
  res.setHeader('Access-Control-Expose-Headers', 'Mcp-Session-Id, MCP-Protocol-Version');
}

export function answerPreflight(res: ServerResponse, methods: string): void {
  res.writeHead(204, {
    'Access-Control-Allow-Methods': methods,
    'Access-Control-Allow-Headers':
      'Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, X-API-Key',
    'Access-Control-Max-Age': '600',
  });
  res.end();
}
