import type { DataSource } from 'typeorm';
import { sqliteConnection } from '@switchboard/persistence';
import { GENESIS_HASH } from '../audit.types.js';
import { readAnchor } from './chain-head.js';
import { chainHash } from './row-hash.js';

export type ChainVerdict =
  | { ok: true; rows: number; firstId?: number; lastId?: number; headHash: string; prunedRows: number }
  | { ok: false; rows: number; brokenAt: number; reason: string };

interface StoredRow {
  id: number;
  at: number;
  principal: string;
  record: string;
  prevHash: string;
  hash: string;
}

/**
 * Walks the log oldest first, as stored (`audit_entry`). A row breaks the chain when its
 * stored hash is not the hash of its record (it was edited), when its indexed columns (id,
 * time, principal) disagree with its record (they were edited, so filters would mislead),
 * when its prev_hash is not the hash of the row before it (a row was inserted or deleted
 * there), or when its id is not the next one (a row was removed and the rest renumbered,
 * or one was slipped in). The first remaining row chains to the retention anchor, so
 * pruning keeps the rest verifiable.
 *
 * What a chain cannot show: rows cut from the newest end. `headHash` is reported so it can
 * be kept elsewhere and compared later.
 */
// A stream of one statement: the connection serves nothing else until it ends (the CLI's own).
export async function verifyChain(dataSource: DataSource): Promise<ChainVerdict> {
  const db = sqliteConnection(dataSource);
  const anchor = readAnchor(db);
  let prev = anchor ? { id: anchor.anchorId, hash: anchor.anchorHash } : { id: 0, hash: GENESIS_HASH };
  let rows = 0;
  let firstId: number | undefined;
  const stored = db
    .prepare('SELECT id, at, principal, record, prev_hash AS prevHash, hash FROM audit_entry ORDER BY id')
    .iterate() as IterableIterator<StoredRow>;
  for (const row of stored) {
    firstId ??= row.id;
    let verdict: string | undefined;
    if (row.id !== prev.id + 1) verdict = `id ${row.id} follows ${prev.id}: rows are missing or were inserted before it`;
    else if (row.prevHash !== prev.hash) {
      verdict = `prev_hash does not match row ${prev.id}: a row before it was deleted, inserted or changed`;
    } else if (chainHash(row.prevHash, row.record) !== row.hash) verdict = 'its record does not match its hash: the row was edited';
    else if (!columnsMatch(row)) verdict = 'its id, time or principal column differs from its record: the row was edited';
    if (verdict) {
      stored.return?.();
      return { ok: false, rows, brokenAt: row.id, reason: verdict };
    }
    prev = { id: row.id, hash: row.hash };
    rows += 1;
  }
  return { ok: true, rows, firstId, lastId: rows > 0 ? prev.id : undefined, headHash: prev.hash, prunedRows: anchor?.prunedRows ?? 0 };
}

function columnsMatch(row: StoredRow): boolean {
  try {
    const fields = JSON.parse(row.record) as unknown[];
    return Array.isArray(fields) && fields[0] === row.id && fields[1] === row.at && fields[2] === row.principal;
  } catch {
    return false;
  }
}
