import { counted } from '@switchboard/core';
import type { SqliteConnection } from '@switchboard/persistence';
import { readAnchor, readChainHead } from '../chain/chain-head.js';
import type { Checkpoint } from './checkpoint-line.js';

/**
 * What a checkpoint can say is wrong with the log now:
 * - `cut`: its row is beyond the head, so rows were cut from the newest end;
 * - `rewritten`: its row is there with another hash (it, or a row before it, was changed, or
 *   the tail was cut and new rows took the old ids);
 * - `pruned-too-early`: its row is behind the pruning anchor though it was not older than
 *   the configured retention: deleted and passed off as pruning;
 * - `missing`: its row is neither there nor behind the anchor (verify's walk names the gap).
 */
export type CheckpointProblem = 'cut' | 'rewritten' | 'pruned-too-early' | 'missing';

export interface CheckpointReport {
  checked: number;
  /** Found with the same hash. */
  matched: number;
  /** Behind the anchor and older than the retention period: pruned as they may be. */
  pruned: number;
  /** The newest checkpoint found with its hash. */
  newestMatched?: Checkpoint;
  /** Per problem, how many checkpoints show it and the newest of them (constant memory). */
  problems: Partial<Record<CheckpointProblem, { count: number; newest: Checkpoint; found?: string }>>;
  headId: number;
}

export interface CheckpointRules {
  /** `audit.retention` in ms; undefined for `off`, when no row may have been pruned. */
  retentionMs: number | undefined;
  now: number;
}

/**
 * Checks each checkpoint against the log by one look-up of its row by id, in the order they
 * come: memory stays the same however many there are, and no order is needed. Run in the
 * same read snapshot as verify's walk, so both see one state of the file.
 *
 * A pruned row is judged by the checkpoint's time, not by the `audit/pruned` marker's
 * cut-off: whoever can write the file can write a marker with any cut-off, but not the
 * checkpoint kept elsewhere. Retention only removes rows older than `now - retention`
 * (the cut-off only moves forward), so a row younger than that cannot have been pruned.
 */
export async function checkCheckpoints(
  db: SqliteConnection,
  checkpoints: AsyncIterable<Checkpoint> | Iterable<Checkpoint>,
  rules: CheckpointRules,
): Promise<CheckpointReport> {
  const rowById = db.prepare('SELECT hash FROM audit_entry WHERE id = ?');
  const headId = readChainHead(db).id;
  const anchorId = readAnchor(db)?.anchorId ?? 0;
  const report: CheckpointReport = { checked: 0, matched: 0, pruned: 0, problems: {}, headId };
  const note = (problem: CheckpointProblem, c: Checkpoint, found?: string) => {
    const seen = report.problems[problem];
    if (!seen) report.problems[problem] = { count: 1, newest: c, found };
    else {
      seen.count += 1;
      if (c.id > seen.newest.id) Object.assign(seen, { newest: c, found });
    }
  };
  for await (const c of checkpoints) {
    report.checked += 1;
    if (c.id > headId) {
      note('cut', c);
      continue;
    }
    const row = rowById.get(c.id) as { hash: string } | undefined;
    if (row) {
      if (row.hash !== c.hash) note('rewritten', c, row.hash);
      else {
        report.matched += 1;
        if (!report.newestMatched || c.id > report.newestMatched.id) report.newestMatched = c;
      }
    } else if (c.id <= anchorId) {
      if (rules.retentionMs !== undefined && c.at < rules.now - rules.retentionMs) report.pruned += 1;
      else note('pruned-too-early', c);
    } else note('missing', c);
  }
  return report;
}

/** One line per problem, each starting `BROKEN: `; none when every checkpoint holds. */
export function checkpointProblemLines(report: CheckpointReport, retention: string): string[] {
  const lines: string[] = [];
  const iso = (ms: number) => new Date(ms).toISOString();
  const more = (count: number, what: string) => (count > 1 ? ` (${counted(count, 'checkpoint')} ${what}; the newest is named)` : '');
  const { cut, rewritten, 'pruned-too-early': early, missing } = report.problems;
  if (cut) {
    lines.push(
      `BROKEN: rows cut from the newest end: checkpoint row ${cut.newest.id} (written ${iso(cut.newest.at)}) is gone, head is ${report.headId}` +
        more(cut.count, 'name rows beyond the head'),
    );
  }
  if (rewritten) {
    lines.push(
      `BROKEN: row ${rewritten.newest.id} (written ${iso(rewritten.newest.at)}) was rewritten: its hash is ${rewritten.found}, the checkpoint says ${rewritten.newest.hash}` +
        more(rewritten.count, 'do not match'),
    );
  }
  if (early) {
    const why = `audit.retention is ${retention}`;
    lines.push(
      `BROKEN: row ${early.newest.id} written ${iso(early.newest.at)}, inside retention, is gone (${why}): it was deleted, not pruned` +
        more(early.count, 'name rows inside retention'),
    );
  }
  if (missing) {
    lines.push(`BROKEN: row ${missing.newest.id} (written ${iso(missing.newest.at)}) is missing` + more(missing.count, 'name missing rows'));
  }
  return lines;
}
