import type { DataSource } from 'typeorm';
import { counted, countedBe } from '@switchboard/core';
import { sqliteConnection, type SqliteConnection } from '@switchboard/persistence';
import { GENESIS_HASH } from '../audit.types.js';
import { readAnchor, type ChainAnchor } from './chain-head.js';
import { pruningMarkerOf, type PruningMarker } from './pruning-marker.js';
import { readerSchemaProblem } from './reader-schema.js';
import { chainHash } from './row-hash.js';

/** The retention pruning that accounts for the rows missing before the first one. */
export interface PruningAccount {
  /** The `audit/pruned` row that records it (chain-verified), and when it was written. */
  markerId: number;
  markerAt: number;
  /** `legacy`: written before markers recorded the anchor; only its id is compared. */
  format: 'anchored' | 'legacy';
  /** Rows through this id were removed: the anchor. */
  throughId: number;
  /** The cut-off the marker records (epoch ms), when it has one. */
  before?: number;
  /** Set while a run is still removing rows: the marker's target, beyond the anchor. */
  inProgressThroughId?: number;
}

export type ChainVerdict =
  | {
      ok: true;
      rows: number;
      firstId?: number;
      lastId?: number;
      headHash: string;
      prunedRows: number;
      /** Present when rows were pruned: the marker that vouches for the anchor. */
      pruning?: PruningAccount;
    }
  | {
      ok: false;
      rows: number;
      brokenAt: number;
      reason: string;
      /**
       * The rows from `brokenAt` on chain correctly, but what precedes them is not
       * accounted for: the retention anchor has no matching pruning marker.
       */
      anchor?: true;
    }
  | {
      ok: false;
      rows: 0;
      /**
       * The rows may chain, but what the readers show is not them: the audit_record view
       * was rewritten, or a trigger can change rows as they are written (readerSchemaProblem).
       */
      schema: true;
      reason: string;
    };

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
 * or one was slipped in). The first remaining row chains to the retention anchor.
 *
 * The anchor (`audit_chain`) is a plain table anyone with the file can write, so it is only
 * trusted when the chain vouches for it: the newest `audit/pruned` row among the verified
 * rows must record exactly that anchor (see accountForAnchor). Without one, the missing
 * oldest rows were deleted, not pruned.
 *
 * Before the walk, the schema the readers rely on: a rewritten audit_record view or a
 * trigger fails verification although every row chains (readerSchemaProblem).
 *
 * What a chain cannot show by itself: rows cut from the newest end, or recent rows deleted
 * behind a forged marker. Checkpoints kept outside the file show both (checkCheckpoints).
 */
// A stream of one statement: the connection serves nothing else until it ends (the CLI's own).
export async function verifyChain(dataSource: DataSource): Promise<ChainVerdict> {
  const db = sqliteConnection(dataSource);
  // One snapshot for the anchor, the walk and the look-ups after it (a pruning run may commit meanwhile).
  if (db.inTransaction) return walk(db);
  db.exec('BEGIN');
  try {
    return walk(db);
  } finally {
    db.exec('COMMIT');
  }
}

function walk(db: SqliteConnection): ChainVerdict {
  const tampered = readerSchemaProblem(db);
  if (tampered) return { ok: false, rows: 0, schema: true, reason: tampered };
  const anchor = readAnchor(db);
  let prev = anchor ? { id: anchor.anchorId, hash: anchor.anchorHash } : { id: 0, hash: GENESIS_HASH };
  let rows = 0;
  let firstId: number | undefined;
  let marker: PruningMarker | undefined;
  const stored = db
    .prepare('SELECT id, at, principal, record, prev_hash AS prevHash, hash FROM audit_entry ORDER BY id')
    .iterate() as IterableIterator<StoredRow>;
  for (const row of stored) {
    firstId ??= row.id;
    let verdict: string | undefined;
    let fields: unknown[] | undefined;
    if (row.id !== prev.id + 1) verdict = `id ${row.id} follows ${prev.id}: rows are missing or were inserted before it`;
    else if (row.prevHash !== prev.hash) {
      verdict = `prev_hash does not match row ${prev.id}: a row before it was deleted, inserted or changed`;
    } else if (chainHash(row.prevHash, row.record) !== row.hash) verdict = 'its record does not match its hash: the row was edited';
    else if (!(fields = matchingFields(row))) verdict = 'its id, time or principal column differs from its record: the row was edited';
    if (verdict) {
      stored.return?.();
      return { ok: false, rows, brokenAt: row.id, reason: verdict };
    }
    marker = pruningMarkerOf(fields!) ?? marker;
    prev = { id: row.id, hash: row.hash };
    rows += 1;
  }
  const ok = { ok: true as const, rows, firstId, lastId: rows > 0 ? prev.id : undefined, headHash: prev.hash, prunedRows: 0 };
  if (!anchor) return ok;
  const account = accountForAnchor(db, anchor, marker, rows);
  if (typeof account === 'string') {
    return { ok: false, rows: 0, brokenAt: anchor.anchorId + 1, reason: account, anchor: true };
  }
  return { ...ok, prunedRows: anchor.prunedRows, pruning: account };
}

/**
 * Whether `marker` (the newest `audit/pruned` row among the verified rows) accounts for the
 * anchor; the reason it does not, otherwise.
 *
 * - A marker written with the anchor (`anchorHash` recorded) must name it exactly: the same
 *   id and hash, and the same running total of pruned rows. While its run is still removing
 *   rows (the anchor is short of the marker's target), the target row must still be there,
 *   with the hash the marker recorded and a time before its cut-off.
 * - A marker in the older format (only `throughId`, from versions before this check) is
 *   accepted when its `throughId` is the anchor's id: the rows after the anchor are chained,
 *   so only the rows that marker accounts for can be missing.
 * - An anchor with no marker at all is never accepted, nor one that the newest marker
 *   does not name (an older marker naming it means rows were removed since, unaccounted).
 * - A marker whose cut-off is later than the marker itself is refused: pruning removes
 *   only rows that were older than its cut-off when it ran.
 */
function accountForAnchor(
  db: SqliteConnection,
  anchor: ChainAnchor,
  marker: PruningMarker | undefined,
  rows: number,
): PruningAccount | string {
  const first = anchor.anchorId + 1;
  const missing = `rows before id ${first} are missing and no pruning marker in the chain accounts for them`;
  if (rows === 0) return `${missing} (the log is empty, yet audit_chain says ${countedBe(anchor.prunedRows, 'row', 'past')} pruned)`;
  if (!marker) return `${missing} (audit_chain claims ${counted(anchor.prunedRows, 'row')} pruned through id ${anchor.anchorId}; there is no audit/pruned row)`;
  const newest = `the newest audit/pruned row, id ${marker.id}`;
  if (!(marker.throughId < marker.id)) return `${missing} (${newest}, records no readable anchor)`;
  if (marker.before !== undefined && marker.before > marker.at) {
    return `${missing} (${newest}, records a cut-off after its own time)`;
  }
  const account: PruningAccount = {
    markerId: marker.id,
    markerAt: marker.at,
    format: marker.format,
    throughId: anchor.anchorId,
    before: marker.before,
  };
  if (marker.format === 'legacy') {
    if (marker.throughId !== anchor.anchorId) {
      return `${missing} (${newest}, pruned through id ${marker.throughId}, but the anchor is at id ${anchor.anchorId})`;
    }
    return account;
  }
  if (marker.throughId === anchor.anchorId) {
    if (marker.anchorHash !== anchor.anchorHash) return `${missing} (${newest}, records another anchor hash for id ${anchor.anchorId})`;
    if (marker.prunedTotal !== anchor.prunedRows) {
      return `${missing} (${newest}, records ${marker.prunedTotal} rows pruned, audit_chain ${anchor.prunedRows})`;
    }
    return account;
  }
  if (marker.throughId < anchor.anchorId) {
    return `${missing} (${newest}, pruned only through id ${marker.throughId}, but the anchor is at id ${anchor.anchorId})`;
  }
  // A run under way (or stopped part-way): rows anchorId+1 .. throughId are still due.
  const target = db.prepare('SELECT at, hash FROM audit_entry WHERE id = ?').get(marker.throughId) as
    | { at: number; hash: string }
    | undefined;
  if (!target || target.hash !== marker.anchorHash) {
    return `${missing} (${newest}, is pruning through id ${marker.throughId}, whose hash it does not match)`;
  }
  if (marker.before === undefined || !(target.at < marker.before)) {
    return `${missing} (${newest}, is pruning through id ${marker.throughId}, which is not older than its cut-off)`;
  }
  if (marker.prunedTotal !== anchor.prunedRows + (marker.throughId - anchor.anchorId)) {
    return `${missing} (${newest}, records ${marker.prunedTotal} rows pruned when done, audit_chain ${anchor.prunedRows} so far)`;
  }
  return { ...account, inProgressThroughId: marker.throughId };
}

/** The record's fields when its id, time and principal match the indexed columns. */
function matchingFields(row: StoredRow): unknown[] | undefined {
  try {
    const fields = JSON.parse(row.record) as unknown[];
    return Array.isArray(fields) && fields[0] === row.id && fields[1] === row.at && fields[2] === row.principal ? fields : undefined;
  } catch {
    return undefined;
  }
}
