import { randomBytes, randomFillSync } from 'node:crypto';

/** A session id: 128 bits from the CSPRNG, hex, so it is visible ASCII as the spec requires. */
export function newSessionId(): string {
  return randomBytes(16).toString('hex');
}

const TRACE_ID_BYTES = 16;
const TRACE_IDS_PER_FILL = 256;
/** Random bytes for the next TRACE_IDS_PER_FILL trace ids; refilled when used up. */
const traceIdPool = Buffer.allocUnsafeSlow(TRACE_ID_BYTES * TRACE_IDS_PER_FILL);
let nextTraceId = TRACE_IDS_PER_FILL;

/**
 * A W3C trace id (trace-context `trace-id`): 16 random bytes as 32 lowercase hex digits.
 * One is made for every recorded request that brings none, so they come from a pool of
 * random bytes filled 4 KiB at a time: 0.07 µs and one 32-character string each, where
 * randomUUID() with its dashes removed cost 0.25 µs and ~1 KB of garbage (measured in
 * docs/performance.md). Trace ids correlate; they are not secrets.
 */
export function newTraceId(): string {
  if (nextTraceId === TRACE_IDS_PER_FILL) {
    randomFillSync(traceIdPool);
    nextTraceId = 0;
  }
  const start = nextTraceId++ * TRACE_ID_BYTES;
  return traceIdPool.toString('hex', start, start + TRACE_ID_BYTES);
}
