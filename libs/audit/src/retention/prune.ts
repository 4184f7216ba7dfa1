import type { SqliteConnection } from '@switchboard/persistence';
import { ANCHOR_KEY, readAnchor, type ChainAnchor } from '../chain/chain-head.js';
import { appendRowInTransaction, pruningMarkerEntry } from '../chain/pruning-marker.js';
import type { Checkpoint } from '../checkpoint/checkpoint-line.js';

export interface PruneResult {
  rows: number;
  /** Id of the last row removed; the chain now starts after it. */
  throughId?: number;
  /** Id of the `audit/pruned` row that records this run. */
  markerId?: number;
}

/**
 * The newest row older than the cut-off, the head excluded: no row after it can be pruned.
 * `INDEXED BY`: left to itself, SQLite answers MAX(id) by walking the table down from the
 * head until a row is old enough, reading every row retention keeps (11 s for 1.7 million
 * rows with a cold cache) on the daemon's event loop, every hour. The time index holds
 * only `at` and the id, and only its entries older than the cut-off are read.
 *
 * It is only a bound, not the last row a run removes: see firstKeptAfter.
 */
export const PLAN_SQL =
  'SELECT MAX(id) AS id FROM audit_entry INDEXED BY audit_entry_at WHERE at < ? AND id < (SELECT MAX(id) FROM audit_entry)';

/**
 * The first row in (after, through] that is not older than the cut-off, read along the
 * primary key. `at` is when a request arrived and the id is assigned at commit, so `at`
 * does not rise with the id: a journal stranded by a crash and moved in by a later start,
 * a call that ran longer than the retention period, or relaxed-mode rows held through an
 * outage land after newer rows. Pruning removes a prefix of ids (the anchor is one id and
 * hash), so it must stop before the first row that is still due to be kept.
 */
const FIRST_KEPT_SQL = 'SELECT id FROM audit_entry WHERE id > ? AND id <= ? AND at >= ? ORDER BY id LIMIT 1';

/** Rows of the primary key read per step of the plan, in chunks of the delete's size. */
const PLAN_CHUNKS_PER_STEP = 8;

/**
 * How much of the event loop a pruning run may take: after each chunk it rests three times
 * as long as the chunk took. Yielding for one turn only (setImmediate) let a large backlog
 * hold the loop ~5 ms in every turn, and a call, which needs several turns, slowed from
 * 0.5 ms to 13 ms for the whole run; resting keeps a call's extra wait near one chunk, and
 * a million rows still go within a minute.
 */
const REST_PER_WORK = 3;

/** Rows per transaction: small enough that one chunk holds the loop about a millisecond. */
export const PRUNE_CHUNK_ROWS = 250;

/** The rest after a chunk that took `workMs` (at least a timer's tick, so timers and I/O run). */
export const restAfter = (workMs: number): number => Math.max(1, Math.ceil(workMs * REST_PER_WORK));

/**
 * Deletes rows older than `before` (epoch ms), oldest first, `chunk` rows per transaction,
 * resting between chunks (restAfter) so calls keep flowing. The newest row is never
 * removed: the chain head stays in the table.
 *
 * Only rows older than `before` are removed, and only a prefix of ids: the run stops before
 * the first row that is not older than the cut-off, even if older rows follow it (they go
 * once the prefix reaches them): the anchor is one id and hash, so what is pruned must be
 * every row up to it. The run first picks the last row it will remove, then, in the
 * transaction that removes the first chunk, appends an `audit/pruned` row that records the
 * anchor the run will leave (that row's id and hash), how many rows it removes and the
 * cut-off. Each chunk moves the anchor (id and hash of the
 * last removed row) in its own transaction, so the remaining rows verify at every moment,
 * and `audit verify` accepts the anchor only because that chained row accounts for it.
 *
 * If another process starts a pruning run meanwhile (its marker moves the anchor first),
 * this one stops at its next chunk: the newest marker is the one that must match the anchor.
 *
 * `now`: the marker's time; a cut-off after it is refused (verify would not accept it).
 */
export async function pruneBefore(
  db: SqliteConnection,
  before: number,
  chunk = PRUNE_CHUNK_ROWS,
  now = Date.now(),
  /** Ends the run after the chunk in hand (a shutdown); the next run goes on from there. */
  signal?: AbortSignal,
  /**
   * Told of the `audit/pruned` row once its transaction committed, as it was written (the
   * checkpoints' head): it is appended beside the writer, so no commit of the writer reports it.
   */
  onMarker?: (marker: Checkpoint) => void,
): Promise<PruneResult> {
  if (!(before <= now)) throw new RangeError(`pruning cut-off ${new Date(before).toISOString()} is after now`);
  // Read without the write lock: on a large backlog this scans the time index.
  const plan = db.prepare(PLAN_SQL);
  const rowOf = db.prepare('SELECT id, at, hash FROM audit_entry WHERE id = ?');
  const newest = db.prepare('SELECT MAX(id) AS id FROM audit_entry');
  const oldest = db.prepare('SELECT id, hash FROM audit_entry WHERE id <= ? ORDER BY id LIMIT ?');
  const remove = db.prepare('DELETE FROM audit_entry WHERE id <= ?');
  const setAnchor = db.prepare(
    `INSERT INTO audit_chain (key, anchor_id, anchor_hash, pruned_rows) VALUES (?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET anchor_id = excluded.anchor_id, anchor_hash = excluded.anchor_hash,
       pruned_rows = audit_chain.pruned_rows + excluded.pruned_rows`,
  );

  const removeChunk = (throughId: number) => {
    const rows = oldest.all(throughId, chunk) as { id: number; hash: string }[];
    if (rows.length === 0) return undefined;
    const last = rows[rows.length - 1];
    // Ids are consecutive, so "id <= last" removes exactly these rows (and nothing older remains).
    const removed = remove.run(last.id).changes;
    setAnchor.run(ANCHOR_KEY, last.id, last.hash, removed);
    return { anchorId: last.id, anchorHash: last.hash, removed };
  };

  const start = db.transaction((throughId: number) => {
    const target = rowOf.get(throughId) as { id: number; at: number; hash: string } | undefined;
    const head = (newest.get() as { id: number | null }).id;
    const anchor: ChainAnchor | undefined = readAnchor(db);
    // Re-checked under the write lock: another process may have pruned since the plan was read.
    if (!target || target.at >= before || head === null || target.id >= head) return undefined;
    if (anchor && anchor.anchorId >= target.id) return undefined;
    const rows = target.id - (anchor?.anchorId ?? 0);
    const facts = {
      rows,
      throughId: target.id,
      anchorHash: target.hash,
      prunedTotal: (anchor?.prunedRows ?? 0) + rows,
      before: new Date(before).toISOString(),
    };
    const entry = pruningMarkerEntry(facts, now);
    const marker = appendRowInTransaction(db, entry);
    return { marker: { ...marker, at: entry.at }, step: removeChunk(target.id) };
  });

  const next = db.transaction((throughId: number, expected: { anchorId: number; anchorHash: string }) => {
    const anchor = readAnchor(db);
    // Someone else moved the anchor: a newer run (with a newer marker) has taken over.
    if (!anchor || anchor.anchorId !== expected.anchorId || anchor.anchorHash !== expected.anchorHash) return undefined;
    return removeChunk(throughId);
  });

  const bound = (plan.get(before) as { id: number | null }).id;
  if (bound === null) return { rows: 0 };
  const planning = lastPrunable(db, bound, before, chunk * PLAN_CHUNKS_PER_STEP);
  let planStep = planning.next();
  while (!planStep.done) {
    await new Promise((r) => setTimeout(r, planStep.value));
    if (signal?.aborted) return { rows: 0 };
    planStep = planning.next();
  }
  const planned = planStep.value;
  if (planned === undefined) return { rows: 0 };
  let chunkStarted = performance.now();
  const started = immediate(start)(planned);
  if (!started?.step) return { rows: 0 };
  onMarker?.(started.marker);
  const result: PruneResult = { rows: 0, markerId: started.marker.id };
  let step: ReturnType<typeof removeChunk> = started.step;
  while (step) {
    result.rows += step.removed;
    result.throughId = step.anchorId;
    if (step.anchorId >= planned || signal?.aborted) break;
    await new Promise((r) => setTimeout(r, restAfter(performance.now() - chunkStarted)));
    if (signal?.aborted) break;
    chunkStarted = performance.now();
    step = immediate(next)(planned, step);
  }
  return result;
}

/**
 * The last row a run may remove: `bound` (PLAN_SQL), or the row before the first one after
 * the anchor that is not older than `before`; undefined when that leaves nothing. Reads
 * `step` ids of the primary key at a time and yields the rest to take before the next
 * read, as the delete rests between chunks, so that a large backlog does not hold the event
 * loop in one statement (a plan of one step does not yield: the run's first chunk commits
 * before it awaits anything). Without the write lock: rows at or below `bound` never change
 * (new rows get ids above the head), and a concurrent pruning run is caught by the re-check
 * in the run's first transaction.
 */
function* lastPrunable(db: SqliteConnection, bound: number, before: number, step: number): Generator<number, number | undefined> {
  const firstKept = db.prepare(FIRST_KEPT_SQL);
  const after = readAnchor(db)?.anchorId ?? 0;
  for (let from = after; from < bound; from += step) {
    const started = performance.now();
    const kept = firstKept.get(from, Math.min(from + step, bound), before) as { id: number } | undefined;
    if (kept) return kept.id - 1 > after ? kept.id - 1 : undefined;
    if (from + step < bound) yield restAfter(performance.now() - started);
  }
  return bound > after ? bound : undefined;
}

/**
 * A transaction function's BEGIN IMMEDIATE variant: the write lock is taken before the
 * chain head and the anchor are read. better-sqlite3 has it but its type declarations leave it out.
 */
function immediate<F extends (...args: never[]) => unknown>(transaction: F): F {
  return (transaction as unknown as { immediate: F }).immediate;
}

/** Rows removed by retention so far (for `audit verify` and stats). */
export function prunedRows(db: SqliteConnection): number {
  return readAnchor(db)?.prunedRows ?? 0;
}
