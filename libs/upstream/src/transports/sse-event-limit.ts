import type { Logger } from '@switchboard/observability';
import { MAX_MESSAGE_CHARS } from './message-limit.js';

const LF = 0x0a;
const CR = 0x0d;

/**
 * A response body that fails once one SSE event (the bytes between two blank lines) grows
 * past MAX_MESSAGE_CHARS: the legacy HTTP+SSE transport is the SDK's, whose event parser
 * would otherwise buffer an endless event until the daemon runs out of memory. Bytes stand
 * in for characters here; the limit is a bound, not an exact count.
 */
export function limitSseEvents(body: ReadableStream<Uint8Array>, logger: Logger, limit = MAX_MESSAGE_CHARS): ReadableStream<Uint8Array> {
  let eventBytes = 0;
  let lineBytes = 0;
  let afterCr = false;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        for (let i = 0; i < chunk.length; i++) {
          const byte = chunk[i];
          if (byte === LF && afterCr) {
            afterCr = false; // the LF of a CRLF: the line already ended at the CR
            continue;
          }
          afterCr = byte === CR;
          if (byte === LF || byte === CR) {
            if (lineBytes === 0) eventBytes = 0; // a blank line ends the event
            lineBytes = 0;
          } else {
            lineBytes++;
            if (++eventBytes > limit) {
              logger.error({ bytes: eventBytes }, 'upstream SSE event over the size limit; the stream is closed');
              controller.error(new Error(`an SSE event over the limit of ${limit} characters`));
              return;
            }
          }
        }
        controller.enqueue(chunk);
      },
    }),
  );
}
