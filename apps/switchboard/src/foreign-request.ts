import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayConfig } from '@switchboard/config';
import { refusedForeign, type ForeignAnswer, type RefusalListener } from '@switchboard/downstream';

/** The daemon's RefusalListener, for the pages' controllers (AppModule provides it). */
export const HTTP_REFUSALS = Symbol('HTTP_REFUSALS');

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
 * A refused request is told to the daemon's listener (the audit row, the operator's warning)
 * and answered 403 in the page's format; returns whether it was.
 */
export function refusedForeignPage(
  req: IncomingMessage,
  res: ServerResponse,
  config: GatewayConfig,
  onRefused: RefusalListener,
  format: 'text' | 'json',
): boolean {
  return refusedForeign(req, res, config, onRefused, PAGE_ANSWERS[format]);
}
