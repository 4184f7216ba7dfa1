import { randomBytes } from 'node:crypto';

/** A session id: 128 bits from the CSPRNG, hex, so it is visible ASCII as the spec requires. */
export function newSessionId(): string {
  return randomBytes(16).toString('hex');
}

/** A short random id for traces and correlation (not a secret). */
export function newTraceId(): string {
  return randomBytes(8).toString('hex');
}
