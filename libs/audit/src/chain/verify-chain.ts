import type { DataSource } from 'typeorm';
import { sqliteConnection } from '@switchboard/persistence';
import { GENESIS_HASH } from '../audit.types.js';
import { AuditQuery } from '../query/audit-query.js';
import { readAnchor } from './chain-head.js';
import { rowHash } from './row-hash.js';

export type ChainVerdict =
  | { ok: true; rows: number; firstId?: number; lastId?: number; headHash: string; prunedRows: number }
  | { ok: false; rows: number; brokenAt: number; reason: string };

/**
 * Walks the log oldest first. A row breaks the chain when its stored hash is not the hash of
 * its contents (it was edited), or when its prev_hash is not the hash of the row before it
 * (a row was inserted or deleted there), or its id is not the next one (a row was removed
 * and the rest renumbered, or one was slipped in). The first remaining row chains to the
 * retention anchor, so pruning keeps the rest verifiable.
 *
 * What a chain cannot show: rows cut from the newest end. `headHash` is reported so it can
 * be kept elsewhere and compared later.
 */
export async function verifyChain(dataSource: DataSource): Promise<ChainVerdict> {
  const anchor = readAnchor(sqliteConnection(dataSource));
  let prev = anchor ? { id: anchor.anchorId, hash: anchor.anchorHash } : { id: 0, hash: GENESIS_HASH };
  let rows = 0;
  let firstId: number | undefined;
  for await (const row of new AuditQuery(dataSource).rows({})) {
    firstId ??= row.id;
    if (row.id !== prev.id + 1) {
      return broken(rows, row.id, `id ${row.id} follows ${prev.id}: rows are missing or were inserted before it`);
    }
    if (row.prevHash !== prev.hash) {
      return broken(rows, row.id, `prev_hash does not match row ${prev.id}: a row before it was deleted, inserted or changed`);
    }
    if (rowHash(row) !== row.hash) return broken(rows, row.id, 'its contents do not match its hash: the row was edited');
    prev = { id: row.id, hash: row.hash };
    rows += 1;
  }
  return { ok: true, rows, firstId, lastId: rows > 0 ? prev.id : undefined, headHash: prev.hash, prunedRows: anchor?.prunedRows ?? 0 };
}

function broken(rows: number, brokenAt: number, reason: string): ChainVerdict {
  return { ok: false, rows, brokenAt, reason };
}
