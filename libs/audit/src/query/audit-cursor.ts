import { createHash } from 'node:crypto';
import type { AuditFilter } from '../audit.types.js';

export type AuditOrder = 'asc' | 'desc';

/**
 * Cursors are opaque to clients. They carry the last id seen and a fingerprint of the
 * filters and order they were made for: the id alone would let a page asked with the cursor
 * but without the filters carry on through the whole log, unfiltered, and look right.
 */
export function encodeCursor(id: number, filter: AuditFilter, order: AuditOrder): string {
  return Buffer.from(`id:${id}:${scopeOf(filter, order)}`).toString('base64url');
}

/** The id in `cursor`; throws InvalidCursorError when it is not one made for this filter and order. */
export function decodeCursor(cursor: string, filter: AuditFilter, order: AuditOrder): number {
  const match = /^id:(\d{1,15}):([A-Za-z0-9_-]{11})$/.exec(Buffer.from(cursor, 'base64url').toString());
  // Node's base64 decoder skips characters it does not know and padding: only the exact
  // text this module hands out is a cursor, not every string that decodes to one.
  if (!match || Buffer.from(`id:${Number(match[1])}:${match[2]}`).toString('base64url') !== cursor) {
    throw new InvalidCursorError('malformed');
  }
  if (match[2] !== scopeOf(filter, order)) throw new InvalidCursorError('other-query');
  return Number(match[1]);
}

export class InvalidCursorError extends Error {
  constructor(
    /** `other-query`: a real cursor, sent with other filters or another order than it was made for. */
    readonly reason: 'malformed' | 'other-query',
  ) {
    super(reason === 'malformed' ? 'invalid cursor' : 'the cursor belongs to other filters or another order');
  }
}

/** 64 bits of SHA-256 over what a page is asked for, the ids the paging adds left out. */
function scopeOf(filter: AuditFilter, order: AuditOrder): string {
  const { since, until, principal, tool, decision, method, upstream, sessionId } = filter;
  const asked = JSON.stringify([order, since, until, principal, tool, decision, method, upstream, sessionId]);
  return createHash('sha256').update(asked).digest().subarray(0, 8).toString('base64url');
}
