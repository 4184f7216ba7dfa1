import type { SqliteConnection } from '@switchboard/persistence';
import { ANCHOR_KEY, readAnchor } from '../chain/chain-head.js';

export interface PruneResult {
  rows: number;
  /** Id of the last row removed; the chain now starts after it. */
  throughId?: number;
}

/**
 * Deletes rows older than `before` (epoch ms), oldest first, `chunk` rows per transaction,
 * yielding to the event loop between chunks so calls keep flowing. Each chunk moves the
 * anchor (id and hash of the last removed row) in the same transaction, so the remaining
 * rows verify at every moment. The newest row is never removed: the chain head stays in
 * the table.
 */
export async function pruneBefore(db: SqliteConnection, before: number, chunk = 1000): Promise<PruneResult> {
  const oldest = db.prepare(
    'SELECT id, hash FROM audit_entry WHERE at < ? AND id < (SELECT MAX(id) FROM audit_entry) ORDER BY id LIMIT ?',
  );
  const remove = db.prepare('DELETE FROM audit_entry WHERE id <= ?');
  const setAnchor = db.prepare(
    `INSERT INTO audit_chain (key, anchor_id, anchor_hash, pruned_rows) VALUES (?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET anchor_id = excluded.anchor_id, anchor_hash = excluded.anchor_hash,
       pruned_rows = audit_chain.pruned_rows + excluded.pruned_rows`,
  );
  const pruneChunk = db.transaction(() => {
    const rows = oldest.all(before, chunk) as { id: number; hash: string }[];
    if (rows.length === 0) return undefined;
    const last = rows[rows.length - 1];
    // Ids are consecutive, so "id <= last" removes exactly these rows (and nothing older remains).
    const removed = remove.run(last.id).changes;
    setAnchor.run(ANCHOR_KEY, last.id, last.hash, removed);
    return { id: last.id, removed };
  });
  const result: PruneResult = { rows: 0 };
  for (;;) {
    const step = (pruneChunk as unknown as { immediate: typeof pruneChunk }).immediate();
    if (!step) return result;
    result.rows += step.removed;
    result.throughId = step.id;
    await new Promise((r) => setImmediate(r));
  }
}

/** Rows removed by retention so far (for `audit verify` and stats). */
export function prunedRows(db: SqliteConnection): number {
  return readAnchor(db)?.prunedRows ?? 0;
}

/** `90d`, `12h`, `30m`, `2w`, or `off`; returns milliseconds, or undefined for off. */
export function parseRetention(text: string): number | undefined {
  if (text === 'off') return undefined;
  const match = /^(\d{1,6})(m|h|d|w)$/.exec(text);
  if (!match) throw new Error(`retention must look like 90d, 12h, 30m, 2w or be off, got '${text}'`);
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[match[2] as 'm' | 'h' | 'd' | 'w'];
  return Number(match[1]) * unit;
}
