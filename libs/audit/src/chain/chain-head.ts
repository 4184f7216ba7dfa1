import type { SqliteConnection, SqliteStatement } from '@switchboard/persistence';
import { GENESIS_HASH } from '../audit.types.js';

export interface ChainHead {
  /** Id of the newest row, or of the last pruned one when none is left. */
  id: number;
  hash: string;
}

export const ANCHOR_KEY = 'anchor';

/**
 * Where the chain ends now: the newest row; with no rows, the pruning anchor; with neither,
 * the genesis. Read inside the writer's transaction, so two writers on one file (a second
 * daemon, the CLI pruning) still extend one chain.
 */
export function readChainHead(db: SqliteConnection): ChainHead {
  const last = statements(db).last.get() as ChainHead | undefined;
  if (last) return last;
  const anchor = readAnchor(db);
  return anchor ? { id: anchor.anchorId, hash: anchor.anchorHash } : { id: 0, hash: GENESIS_HASH };
}

/**
 * The newest row as a checkpoint names it (its time too); undefined when the log has none.
 * Read once, by `switchboard audit checkpoint` and by a start that moved rows in from a
 * journal, so not among the writer's prepared statements.
 */
export function readNewestRow(db: SqliteConnection): (ChainHead & { at: number }) | undefined {
  return db.prepare('SELECT id, hash, at FROM audit_entry ORDER BY id DESC LIMIT 1').get() as (ChainHead & { at: number }) | undefined;
}

export interface ChainAnchor {
  anchorId: number;
  anchorHash: string;
  prunedRows: number;
}

export function readAnchor(db: SqliteConnection): ChainAnchor | undefined {
  return statements(db).anchor.get(ANCHOR_KEY) as ChainAnchor | undefined;
}

// Prepared once per connection: the head is read at every group commit.
const prepared = new WeakMap<SqliteConnection, { last: SqliteStatement; anchor: SqliteStatement }>();

function statements(db: SqliteConnection) {
  let s = prepared.get(db);
  if (!s) {
    s = {
      last: db.prepare('SELECT id, hash FROM audit_entry ORDER BY id DESC LIMIT 1'),
      anchor: db.prepare(
        'SELECT anchor_id AS anchorId, anchor_hash AS anchorHash, pruned_rows AS prunedRows FROM audit_chain WHERE key = ?',
      ),
    };
    prepared.set(db, s);
  }
  return s;
}
