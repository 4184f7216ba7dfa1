import type { IncomingMessage, ServerResponse } from 'node:http';
import { refusedForeign, type ForeignAnswer } from '@switchboard/downstream';
import type { GatewayRuntime } from './gateway-runtime.js';

/** `request refused: <why>`, as plain text or as the JSON /readyz speaks. */
const PAGE_ANSWERS: Record<'text' | 'json', ForeignAnswer> = {
  text: (res, status, reason) =>
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }).end(`request refused: ${reason}\n`),
  json: (res, status, reason) =>
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'refused', error: `request refused: ${reason}` })),
};

/**
 * The MCP endpoints' Host/Origin check (refusedForeign) for the daemon's own pages (/,
 * /readyz): a page a rebound DNS name or another site loads must learn nothing there either.
 * A refused request is audited and answered 403 in the page's format; returns whether it was.
 */
export function refusedForeignPage(req: IncomingMessage, res: ServerResponse, runtime: GatewayRuntime, format: 'text' | 'json'): boolean {
  const audit = runtime.audit;
  return refusedForeign(req, res, runtime.config, audit && ((refusal) => audit.recordHttpRefusal(refusal)), PAGE_ANSWERS[format]);
}
