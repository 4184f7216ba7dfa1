import type { IncomingMessage } from 'node:http';
import { MAX_MESSAGE_CHARS } from './message-limit.js';
import { SseParser } from './sse-parser.js';

/** Helpers shared by the response streams and the standalone stream of streamable-http-transport.ts. */

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 10_000;
/**
 * The soonest a stream is reopened, whatever the server's `retry` hint: a server that says
 * `retry: 0` and ends each stream as soon as it is open (which counts as a success, so no
 * backoff builds up) would otherwise have the gateway reopen it in a loop, hundreds of GETs a
 * second for as long as the session lasts.
 */
export const MIN_RETRY_MS = 250;

/** `text/event-stream; charset=utf-8` -> `text/event-stream`. */
export function mediaType(header: string | undefined): string {
  if (!header) return '';
  const semi = header.indexOf(';');
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
}

/**
 * How long to wait before reconnection attempt `attempt` (0-based): the server's `retry`
 * hint when it gave one (0.5 s otherwise), doubling with each failure in a row, at least
 * MIN_RETRY_MS and at most 10 s.
 */
export function reconnectDelay(retryHintMs: number | undefined, attempt: number): number {
  return Math.min(MAX_RETRY_MS, Math.max(MIN_RETRY_MS, (retryHintMs ?? FIRST_RETRY_MS) * 2 ** attempt));
}

/**
 * Starts reading an MCP event stream: the data of every `message` event (or one with no
 * event name) goes to `onMessage`, the server's `retry` hint to `onRetry`. An event over
 * MAX_MESSAGE_CHARS goes to `onTooLong` (with the length seen), and the response is dropped.
 * Errors on the response are left to its `close` event, which the caller handles; the
 * returned parser holds the last event id for a resumption.
 */
export function readMessageEvents(
  res: IncomingMessage,
  lastEventId: string | undefined,
  onMessage: (json: string) => void,
  onRetry: (ms: number) => void,
  onTooLong: (length: number) => void,
): SseParser {
  const parser = new SseParser(
    {
      event: (data, type) => {
        if (type === '' || type === 'message') onMessage(data);
      },
      retry: onRetry,
      overflow: (length) => {
        onTooLong(length);
        res.destroy();
      },
    },
    lastEventId,
    MAX_MESSAGE_CHARS,
  );
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => parser.push(chunk));
  res.on('error', () => undefined);
  return parser;
}
