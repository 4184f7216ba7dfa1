import type { SqliteConnection, SqliteStatement } from '@switchboard/persistence';
import type { AuditEntry } from '../audit.types.js';
import { readChainHead, type ChainHead } from '../chain/chain-head.js';
import { chainHash, recordText } from '../chain/row-hash.js';
import { journalMarks, rowsMoved, type JournalMark } from '../journal/journal-mark.js';

/**
 * Rows per INSERT statement, largest first. One statement for several rows saves SQLite's
 * per-statement work and a native call per row; a batch is cut into these sizes, so only
 * six statements are ever prepared.
 */
const CHUNKS = [32, 16, 8, 4, 2, 1];

/**
 * Appends entries as chained rows in one IMMEDIATE transaction: the chain head is read
 * under the write lock, so the ids and hashes stay consecutive even if another process
 * writes to the same file. better-sqlite3 is synchronous, so a batch commits within one
 * turn of the event loop.
 */
export class RowInserter {
  private readonly inserts = new Map<number, SqliteStatement>();
  private readonly appendAll: (entries: readonly AuditEntry[], mark: JournalMark | undefined) => ChainHead;
  private readonly moveAll: (journal: string, generation: number, rows: readonly AuditEntry[]) => number;

  constructor(private readonly db: SqliteConnection) {
    const insertAll = (entries: readonly AuditEntry[]): ChainHead => {
      let head = readChainHead(db);
      let next = 0;
      while (next < entries.length) {
        const size = CHUNKS.find((chunk) => chunk <= entries.length - next)!;
        const values: unknown[] = [];
        for (let i = next; i < next + size; i++) {
          const row = entries[i];
          const id = head.id + 1;
          const record = recordText(id, row);
          const hash = chainHash(head.hash, record);
          values.push(id, row.at, row.principal, record, head.hash, hash);
          head = { id, hash };
        }
        // A trigger's RAISE(IGNORE) (or an INSERT rule) skips a row without an error: the
        // commit would succeed, the host get its answer, and the next commit chain on from
        // the row before, leaving no gap to find. Rows the table did not take fail the commit.
        const { changes } = this.insertOf(size).run(values);
        if (changes !== size) throw new RowsNotStoredError(size - changes, size);
        next += size;
      }
      return head;
    };
    const marks = journalMarks(db);
    const append = db.transaction((entries: readonly AuditEntry[], mark: JournalMark | undefined) => {
      const last = insertAll(entries);
      if (mark) marks.write(mark);
      return last;
    });
    const move = db.transaction((journal: string, generation: number, rows: readonly AuditEntry[]) => {
      const mark = marks.read(journal);
      const moved = rowsMoved(mark, generation, rows.length);
      const rest = rows.slice(moved);
      if (rest.length > 0) insertAll(rest);
      if (!mark || mark.generation <= generation) marks.write({ journal, generation, movedRows: rows.length });
      return rest.length;
    });
    this.appendAll = immediate(append);
    this.moveAll = immediate(move);
  }

  /**
   * Commits every entry or none; returns the last row's id and hash (the head it left).
   * Throws what SQLite threw. With `mark`, records in the same transaction how far a journal
   * is now in the log.
   */
  append(entries: readonly AuditEntry[], mark?: JournalMark): ChainHead {
    return this.appendAll(entries, mark);
  }

  /**
   * Moves the rows of a journal left by a process that stopped without moving them all
   * (`rows`: its generation `generation`, in order), skipping those its mark says are in
   * the log already; returns how many were inserted. One transaction, the mark read under
   * the write lock: two processes recovering the same journal move it once.
   */
  moveJournal(journal: string, generation: number, rows: readonly AuditEntry[]): number {
    return this.moveAll(journal, generation, rows);
  }

  private insertOf(rows: number): SqliteStatement {
    let statement = this.inserts.get(rows);
    if (!statement) {
      const tuples = Array(rows).fill('(?, ?, ?, ?, ?, ?)').join(', ');
      statement = this.db.prepare(`INSERT INTO audit_entry (id, at, principal, record, prev_hash, hash) VALUES ${tuples}`);
      this.inserts.set(rows, statement);
    }
    return statement;
  }
}

/**
 * A transaction function's BEGIN IMMEDIATE variant: the write lock is taken before the chain
 * head is read. better-sqlite3 has it (`.immediate`) but its type declarations leave it out.
 */
function immediate<F extends (...args: never[]) => unknown>(transaction: F): F {
  return (transaction as unknown as { immediate: F }).immediate;
}

/** An INSERT that reported fewer rows than it was given: something in the schema dropped them. */
export class RowsNotStoredError extends Error {
  constructor(dropped: number, given: number) {
    super(
      `audit_entry did not store ${dropped} of ${given} rows given to it (a trigger added to the database drops them; ` +
        '`switchboard audit verify` names it): the rows are kept and retried',
    );
  }
}
