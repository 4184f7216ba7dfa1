import type { Logger } from '@switchboard/observability';
import type { JournalFile } from '../journal/journal-file.js';

/**
 * `strict`: a request's response waits for the commit that holds its row, so an answered
 * call is in the log even after kill -9. `relaxed`: the response goes at once and the row
 * is committed within `flushMs`.
 */
export type AuditMode = 'strict' | 'relaxed';

export interface AuditWriterOptions {
  mode: AuditMode;
  /** relaxed: the longest a row waits for its commit. */
  flushMs: number;
  /** Rows held in memory while the database cannot be written; beyond it rows are lost, counted and logged. */
  maxQueuedRows: number;
  logger: Logger;
  /**
   * Strict mode: a batch is released once written to this journal, and its rows are
   * committed like relaxed ones (within `flushMs`). Needs a committer on this thread
   * (InlineCommitter): a journal write is no fsync, so it is no more durable than that.
   */
  journal?: JournalFile;
}

export interface AuditWriterStatus {
  mode: AuditMode;
  writable: boolean;
  /** Why the last commit failed, while it keeps failing. */
  failure?: string;
  failingSince?: string;
  queuedRows: number;
  committedRows: number;
  commits: number;
  lostRows: number;
  /**
   * Milliseconds the event loop has spent in commits since start. With `synchronous: normal`
   * that is each whole commit (SQLite runs on this thread, WAL checkpoints included), so over
   * committedRows it is the writer's cost per row inside the daemon; with `full` it is only
   * the hand-over to the commit thread.
   */
  commitMs: number;
  /** The longest single commit since start, ms: how long one commit held up every call. */
  longestCommitMs: number;
  /** Strict with a journal: the batches written to it (each one `write`), and its file. */
  journalWrites: number;
  journal?: string;
}
