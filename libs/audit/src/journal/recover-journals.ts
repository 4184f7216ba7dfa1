import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@switchboard/observability';
import type { SqliteConnection } from '@switchboard/persistence';
import type { AuditEntry } from '../audit.types.js';
import { entryFromRecord } from '../chain/row-hash.js';
import { RowInserter } from '../writer/row-insert.js';
import { JOURNAL_SUFFIX, LOCK_SUFFIX, journalOwner, journalPid, takeLock, type JournalHeader } from './journal-file.js';
import { journalMarks, rowsMoved } from './journal-mark.js';

/** A journal file as read back: its generation's rows, and the lines that were not rows. */
export interface JournalContents {
  /** Undefined for an empty file (emptied, and the process died before the next header). */
  generation?: number;
  rows: AuditEntry[];
  /** Lines that are neither the header nor a row; the last line without its newline is not counted (see readJournal). */
  badLines: number;
}

/**
 * Parses a journal. A last line without its newline is a write the process did not finish:
 * its calls were never answered, so it is left out. Any other line that is not a row is
 * counted in badLines (the file is then kept for a person to look at).
 */
export function readJournal(path: string): JournalContents {
  const lines = readFileSync(path, 'utf8').split('\n');
  lines.pop(); // '' after the last newline, or the unfinished last write
  if (lines.length === 0) return { rows: [], badLines: 0 };
  let header: Partial<JournalHeader> | undefined;
  try {
    header = JSON.parse(lines[0]) as Partial<JournalHeader>;
  } catch {
    header = undefined;
  }
  if (header?.switchboardAuditJournal !== 1 || typeof header.generation !== 'number') {
    return { rows: [], badLines: lines.length };
  }
  const rows: AuditEntry[] = [];
  let badLines = 0;
  for (let i = 1; i < lines.length; i++) {
    try {
      rows.push(entryFromRecord(lines[i]));
    } catch {
      badLines += 1;
    }
  }
  return { generation: header.generation, rows, badLines };
}

/**
 * Moves into the log the rows of journals whose processes are gone (their lock is free):
 * those their mark says are not in yet. A journal in use by a live process is left alone.
 * Then removes each moved journal, and the marks of journals that no longer exist.
 * Returns how many rows were moved. Run at start, after the migrations.
 */
export function recoverJournals(db: SqliteConnection, dir: string, logger: Logger): number {
  const inserter = new RowInserter(db);
  const marks = journalMarks(db);
  let moved = 0;
  for (const name of journalNames(dir)) {
    const path = join(dir, name + JOURNAL_SUFFIX);
    const lockPath = join(dir, name + LOCK_SUFFIX);
    // Not taken as "its process is gone": a new lock file would be free even while the owner runs.
    if (!existsSync(lockPath)) {
      // (Unless the journal went too: its owner exited cleanly since the listing.)
      if (existsSync(path)) logger.warn({ journal: path, pid: journalPid(name) }, unknownOwnerAdvice(path, lockPath, journalPid(name)));
      continue;
    }
    const lock = takeLock(lockPath);
    if (!lock) continue; // its process is running
    // Its owner removed it between our listing and our lock (a clean exit removes the
    // journal, then releases its lock): nothing to move.
    if (!existsSync(path)) {
      lock.release();
      continue;
    }
    try {
      const journal = readJournal(path);
      const rows = journal.generation === undefined ? 0 : inserter.moveJournal(name, journal.generation, journal.rows);
      moved += rows;
      if (journal.badLines > 0) {
        renameSync(path, `${path}.corrupt`);
        logger.error(
          { journal: `${path}.corrupt`, badLines: journal.badLines, movedRows: rows },
          'audit: a journal had lines that are not rows; the rows it had were moved, the file is kept for inspection',
        );
      } else {
        rmSync(path, { force: true });
        if (rows > 0) {
          logger.warn({ journal: path, rows }, 'audit: moved rows into the log from the journal of a process that stopped without moving them');
        }
      }
    } catch (err) {
      // Kept as it is: the next start tries again (a locked database, say).
      logger.error({ journal: path, err: String((err as Error)?.message ?? err) }, 'audit: could not move the rows of a journal; it is kept');
    } finally {
      // A journal kept (its rows could not be moved) keeps its lock file, for the next start.
      lock.release({ keepFile: existsSync(path) });
    }
  }
  // After the files: a mark whose journal is gone is never needed again.
  const present = new Set(journalNames(dir));
  for (const journal of marks.journals()) if (!present.has(journal)) marks.remove(journal);
  return moved;
}

/** What the journals of a data dir hold that no database has yet (see strandedJournals). */
export interface StrandedJournals {
  /** Rows of journals whose process is gone, beyond their marks: the next start moves them. */
  rows: number;
  /** Journals without their lock file, whose owner cannot be told: left alone (unknownOwnerAdvice). */
  unknownOwner: { journal: string; lock: string; pid: string }[];
}

/**
 * Rows that are in no database yet: those of journals whose process is gone, beyond their
 * marks (the rows of every request it recorded, answered, denied or refused). They are
 * moved by the next start; until then a reader of the database (the audit CLI) does not
 * see them, and should say so; likewise journals whose owner cannot be told. Reads only.
 */
export function strandedJournals(db: SqliteConnection, dir: string): StrandedJournals {
  const stranded: StrandedJournals = { rows: 0, unknownOwner: [] };
  for (const name of journalNames(dir)) {
    const journal = join(dir, name + JOURNAL_SUFFIX);
    const lock = join(dir, name + LOCK_SUFFIX);
    const owner = journalOwner(lock);
    if (owner === 'unknown' && existsSync(journal)) stranded.unknownOwner.push({ journal, lock, pid: journalPid(name) });
    if (owner === 'gone') stranded.rows += rowsNotIn(db, journal, name);
  }
  return stranded;
}

/**
 * The rows of every journal in `dir`, a running process's too, that `db` does not hold
 * (beyond their marks): what a copy of `db` taken in the same read snapshot lacks, until
 * their process commits them (or the next start moves them in). Reads only.
 */
export function journalRowsNotIn(db: SqliteConnection, dir: string): number {
  return journalNames(dir).reduce((rows, name) => rows + rowsNotIn(db, join(dir, name + JOURNAL_SUFFIX), name), 0);
}

/** A journal's rows beyond its mark in `db`. */
function rowsNotIn(db: SqliteConnection, journal: string, name: string): number {
  try {
    const contents = readJournal(journal);
    if (contents.generation === undefined) return 0;
    return contents.rows.length - rowsMoved(journalMarks(db).read(name), contents.generation, contents.rows.length);
  } catch {
    // Removed meanwhile (a start moved it, its process committed and ended), or a database
    // from before journals: nothing to count.
    return 0;
  }
}

/** What to do about a journal without its lock file: the same words at start and in the CLI. */
export function unknownOwnerAdvice(journal: string, lock: string, pid: string): string {
  return (
    `audit: the journal ${journal} has no lock file, so whether its process (pid ${pid}) still runs cannot be told; ` +
    `its rows are left where they are. If that process has stopped, create the lock file (touch ${lock}) ` +
    'and the next start moves them into the log'
  );
}

/** The names (file names without `.journal`) of the journals in `dir`; none if there is no such dir. */
function journalNames(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith(JOURNAL_SUFFIX))
    .map((file) => file.slice(0, -JOURNAL_SUFFIX.length));
}
