import type { SqliteConnection } from '@switchboard/persistence';
import type { AuditEntry } from '../audit.types.js';
import type { ChainHead } from '../chain/chain-head.js';
import type { JournalMark } from '../journal/journal-mark.js';
import { RowInserter } from './row-insert.js';

/**
 * Where a batch of rows becomes one transaction. The writer keeps at most one commit in
 * flight and gathers everything that arrives meanwhile into the next one.
 */
export interface Committer {
  /**
   * All rows or none; rejects with SQLite's error (its `code` kept: SQLITE_FULL, SQLITE_BUSY, ...).
   * `mark`: how far a journal is in the log with these rows, recorded in the same transaction.
   * Resolves with the id and hash of the last row written: the head the checkpoints name.
   */
  commit(entries: readonly AuditEntry[], mark?: JournalMark): Promise<ChainHead>;
  close(): Promise<void>;
}

/**
 * Commits on the calling thread. The daemon's choice with `synchronous: normal`, where a
 * commit appends to the WAL without an fsync (~30 µs plus ~8 µs a row); with `full` it uses
 * the worker (worker-committer.ts), so that no fsync blocks the event loop.
 */
export class InlineCommitter implements Committer {
  private readonly inserter: RowInserter;

  constructor(db: SqliteConnection) {
    this.inserter = new RowInserter(db);
  }

  commit(entries: readonly AuditEntry[], mark?: JournalMark): Promise<ChainHead> {
    try {
      return Promise.resolve(this.inserter.append(entries, mark));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async close(): Promise<void> {}
}
