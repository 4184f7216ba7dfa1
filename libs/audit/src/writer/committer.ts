import type { SqliteConnection } from '@switchboard/persistence';
import type { AuditEntry } from '../audit.types.js';
import { RowInserter } from './row-insert.js';

/**
 * Where a batch of rows becomes one transaction. The writer keeps at most one commit in
 * flight and gathers everything that arrives meanwhile into the next one.
 */
export interface Committer {
  /** All rows or none; rejects with SQLite's error (its `code` kept: SQLITE_FULL, SQLITE_BUSY, ...). */
  commit(entries: readonly AuditEntry[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Commits on the calling thread. For the CLI, tests and tools; the daemon uses the
 * worker (worker-committer.ts) so that SQLite's work and its fsync never block the event loop.
 */
export class InlineCommitter implements Committer {
  private readonly inserter: RowInserter;

  constructor(db: SqliteConnection) {
    this.inserter = new RowInserter(db);
  }

  commit(entries: readonly AuditEntry[]): Promise<void> {
    try {
      this.inserter.append(entries);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async close(): Promise<void> {}
}
