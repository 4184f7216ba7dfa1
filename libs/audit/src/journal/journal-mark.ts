import type { SqliteConnection, SqliteStatement } from '@switchboard/persistence';

/** How much of one journal file is in the log: its first `movedRows` rows of `generation`. */
export interface JournalMark {
  journal: string;
  generation: number;
  movedRows: number;
}

/** Of a journal generation's `rows` rows, how many its mark says the log holds already. */
export function rowsMoved(mark: JournalMark | undefined, generation: number, rows: number): number {
  if (!mark || mark.generation < generation) return 0;
  return mark.generation === generation ? Math.min(mark.movedRows, rows) : rows;
}

export interface JournalMarkStatements {
  read(journal: string): JournalMark | undefined;
  write(mark: JournalMark): void;
  remove(journal: string): void;
  /** Every journal that has a mark. */
  journals(): string[];
}

// Prepared once per connection: the mark is written with every commit of journaled rows.
const prepared = new WeakMap<SqliteConnection, JournalMarkStatements>();

/** The audit_journal_mark table's statements on `db` (see migration 1795240800000). */
export function journalMarks(db: SqliteConnection): JournalMarkStatements {
  let marks = prepared.get(db);
  if (!marks) {
    const read: SqliteStatement = db.prepare(
      'SELECT journal, generation, moved_rows AS movedRows FROM audit_journal_mark WHERE journal = ?',
    );
    const write = db.prepare(
      `INSERT INTO audit_journal_mark (journal, generation, moved_rows) VALUES (?, ?, ?)
       ON CONFLICT (journal) DO UPDATE SET generation = excluded.generation, moved_rows = excluded.moved_rows`,
    );
    const remove = db.prepare('DELETE FROM audit_journal_mark WHERE journal = ?');
    const all = db.prepare('SELECT journal FROM audit_journal_mark');
    marks = {
      read: (journal) => read.get(journal) as JournalMark | undefined,
      write: (mark) => void write.run(mark.journal, mark.generation, mark.movedRows),
      remove: (journal) => void remove.run(journal),
      journals: () => (all.all() as { journal: string }[]).map((row) => row.journal),
    };
    prepared.set(db, marks);
  }
  return marks;
}
