import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpRefusal, refuseReason } from '@switchboard/downstream';
import type { GatewayRuntime } from './gateway-runtime.js';

/**
 * The MCP endpoints' Host/Origin check for the daemon's own pages (/, /readyz): a page a
 * rebound DNS name or another site loads must learn nothing there either. A refused request
 * is answered 403 with `request refused: <why>`, as plain text or as the JSON those pages
 * speak, and audited; returns whether it was.
 */
export function refusedForeign(req: IncomingMessage, res: ServerResponse, runtime: GatewayRuntime, format: 'text' | 'json'): boolean {
  const refused = refuseReason(req, runtime.config);
  if (refused === undefined) return false;
  runtime.audit?.recordHttpRefusal(httpRefusal(req, refused));
  const message = `request refused: ${refused}`;
  if (format === 'json') res.writeHead(403, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'refused', error: message }));
  else res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }).end(`${message}\n`);
  return true;
}
