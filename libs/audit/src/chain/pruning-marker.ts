import type { SqliteConnection } from '@switchboard/persistence';
import type { AuditEntry } from '../audit.types.js';
import { systemEntry } from '../system-entry.js';
import { readChainHead } from './chain-head.js';
import { chainHash, recordText } from './row-hash.js';

export const PRUNED_METHOD = 'audit/pruned';

/**
 * What an `audit/pruned` row records (its `arguments`). Retention may only remove rows that
 * such a row, chained like any other, accounts for: `audit verify` trusts the anchor in
 * `audit_chain` only when the newest of these rows names it.
 */
export interface PruningFacts {
  /** Rows this run removes: ids after the previous anchor through `throughId`. */
  rows: number;
  /** The last id it removes: the anchor it leaves. Row `throughId + 1` is the first one kept. */
  throughId: number;
  /** Hash of row `throughId`: the anchor's hash, which is row `throughId + 1`'s prev_hash. */
  anchorHash: string;
  /** Rows pruned from the log so far, this run included (`audit_chain.pruned_rows` once it is done). */
  prunedTotal: number;
  /** The cut-off: rows that arrived before this time (ISO) were due for removal. */
  before: string;
}

/**
 * An `audit/pruned` row as read back by `verify`. `format: 'legacy'` is a row written by
 * versions before the anchor was recorded: it has `rows`, `throughId` and `before` only.
 */
export interface PruningMarker {
  /** The marker row's own id and time. */
  id: number;
  at: number;
  format: 'anchored' | 'legacy';
  throughId: number;
  anchorHash?: string;
  prunedTotal?: number;
  /** Epoch ms of the cut-off, when the row has a readable one. */
  before?: number;
}

export function pruningMarkerEntry(facts: PruningFacts, at = Date.now()): AuditEntry {
  return {
    ...systemEntry(
      { method: PRUNED_METHOD, decision: 'allowed', rule: 'retention', outcome: 'ok', errorMessage: null },
      { rows: facts.rows, throughId: facts.throughId, anchorHash: facts.anchorHash, prunedTotal: facts.prunedTotal, before: facts.before },
    ),
    at,
  };
}

/**
 * Appends one row at the chain's head, on a connection that is already inside a write
 * transaction (the head is read under its lock, as the writer does). For the pruning marker,
 * which must be committed with the first rows it removes.
 */
export function appendRowInTransaction(db: SqliteConnection, row: AuditEntry): { id: number; hash: string } {
  if (!db.inTransaction) throw new Error('appendRowInTransaction needs an open write transaction');
  const head = readChainHead(db);
  const id = head.id + 1;
  const record = recordText(id, row);
  const hash = chainHash(head.hash, record);
  db.prepare('INSERT INTO audit_entry (id, at, principal, record, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)').run(
    id,
    row.at,
    row.principal,
    record,
    head.hash,
    hash,
  );
  return { id, hash };
}

/**
 * The pruning marker a stored record is, or undefined for any other row (`fields`: the
 * record's parsed JSON array). Only rows the gateway wrote about itself qualify: principal
 * `switchboard`, auth method `internal`, rule `retention`; no host request records those.
 * A marker whose facts cannot be read comes back with `throughId` NaN, so it accounts for
 * nothing.
 */
export function pruningMarkerOf(fields: unknown[]): PruningMarker | undefined {
  if (fields[10] !== PRUNED_METHOD || fields[2] !== 'switchboard' || fields[3] !== 'internal' || fields[17] !== 'retention') {
    return undefined;
  }
  const id = fields[0] as number;
  const at = fields[1] as number;
  let facts: Record<string, unknown> = {};
  try {
    const parsed = typeof fields[13] === 'string' ? (JSON.parse(fields[13]) as unknown) : undefined;
    if (parsed && typeof parsed === 'object') facts = parsed as Record<string, unknown>;
  } catch {
    // unreadable facts: a marker that accounts for nothing
  }
  const throughId = Number.isSafeInteger(facts.throughId) ? (facts.throughId as number) : Number.NaN;
  const before = typeof facts.before === 'string' ? Date.parse(facts.before) : Number.NaN;
  const marker: PruningMarker = { id, at, format: 'legacy', throughId, before: Number.isNaN(before) ? undefined : before };
  if (typeof facts.anchorHash === 'string') {
    marker.format = 'anchored';
    marker.anchorHash = facts.anchorHash;
    marker.prunedTotal = Number.isSafeInteger(facts.prunedTotal) ? (facts.prunedTotal as number) : Number.NaN;
  }
  return marker;
}
