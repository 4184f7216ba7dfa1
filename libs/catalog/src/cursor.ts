import { invalidParams } from '@switchboard/core';
import type { ListKind } from './catalog.types.js';

/**
 * The gateway's own list cursor: base64url of `{"k":<kind>,"a":<last key returned>}`.
 *
 * Keyset, not offset: the next page starts after the last key the host saw, so a catalog
 * change between two pages neither repeats nor skips an item that was there all along.
 * It carries no secret and grants nothing (every key in it was already shown to the host),
 * so it is not signed; it is only validated.
 */
interface CursorBody {
  k: ListKind;
  a: string;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function encodeCursor(kind: ListKind, after: string): string {
  const body: CursorBody = { k: kind, a: after };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

/** Returns the key to resume after; throws -32602 for anything this gateway did not issue for `kind`. */
export function decodeCursor(kind: ListKind, cursor: unknown): string {
  if (typeof cursor !== 'string' || !BASE64URL.test(cursor)) throw invalidCursor();
  const bytes = Buffer.from(cursor, 'base64url');
  // Node's decoder skips what it cannot read; insisting on the canonical form rejects
  // truncated or hand-edited cursors instead of guessing what they meant.
  if (bytes.toString('base64url') !== cursor) throw invalidCursor();
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw invalidCursor();
  }
  if (!isCursorBody(body) || body.k !== kind) throw invalidCursor();
  return body.a;
}

function isCursorBody(value: unknown): value is CursorBody {
  if (typeof value !== 'object' || value === null) return false;
  const { k, a } = value as Record<string, unknown>;
  return typeof k === 'string' && typeof a === 'string';
}

const invalidCursor = () => invalidParams('Invalid cursor');
