import type { SqliteConnection } from '@switchboard/persistence';
import { InlineCommitter, type Committer } from './committer.js';
import { WorkerCommitter, type CommitWorkerOptions } from './worker-committer.js';

/**
 * The committer for a `synchronous` setting (ADR 007). `normal`: a commit appends to the
 * WAL without an fsync, cheaper than handing the batch to a thread and back, so it runs on
 * the caller's thread, on `db`. `full`: every commit waits for an fsync, which must not
 * stall the event loop, so commits run in a worker thread with its own connection to `file`.
 */
export function committerFor(db: SqliteConnection, options: CommitWorkerOptions): Committer {
  return options.synchronous === 'full' ? new WorkerCommitter(options) : new InlineCommitter(db);
}
