import { Worker } from 'node:worker_threads';
import type { SyncMode } from '@switchboard/persistence';
import type { AuditEntry } from '../audit.types.js';
import type { ChainHead } from '../chain/chain-head.js';
import type { Committer } from './committer.js';

export interface CommitWorkerOptions {
  file: string;
  synchronous: SyncMode;
  busyTimeoutMs: number;
}

export interface CommitRequest {
  id: number;
  entries: readonly AuditEntry[];
}

export interface CommitReply {
  id: number;
  /** The head the commit left; absent when it failed. */
  head?: ChainHead;
  error?: { code?: string; message: string };
}

/** An Error carrying SQLite's code, as better-sqlite3 throws it. */
class SqliteError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * Commits in a worker thread. Measured in the daemon (docs/performance.md): committing on
 * the event loop blocked it for every batch (an fsync with `synchronous: full`), so calls
 * stopped while SQLite worked and batches stayed small. Here the loop keeps serving and the
 * rows that arrive during one commit make the next batch.
 */
export class WorkerCommitter implements Committer {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, { resolve(head: ChainHead): void; reject(err: Error): void }>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: CommitWorkerOptions) {}

  /** No journal mark: a journal goes with the inline committer only (see AuditWriterOptions.journal). */
  commit(entries: readonly AuditEntry[], mark?: unknown): Promise<ChainHead> {
    if (mark !== undefined) return Promise.reject(new Error('the worker committer does not take journal marks'));
    if (this.closed) return Promise.reject(new Error('audit commit thread is closed'));
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise<ChainHead>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, entries } satisfies CommitRequest);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    const done = new Promise((resolve) => worker.once('exit', resolve));
    worker.postMessage('close');
    await done;
  }

  /**
   * Started with the first commit: a daemon that serves no call (a `switchboard stdio`
   * a host launched and left idle) carries no second V8 heap.
   */
  private start(): Worker {
    const worker = new Worker(new URL('./commit-worker.js', import.meta.url), { workerData: this.options });
    worker.on('message', (reply: CommitReply) => {
      const waiter = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (!waiter) return;
      if (reply.error) waiter.reject(new SqliteError(reply.error.message, reply.error.code));
      else waiter.resolve(reply.head!);
    });
    // A thread that dies (it could not open the file, say) fails its commits: the writer
    // reports the log unwritable, strict mode refuses calls, and the writer's retry starts
    // a new thread.
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiter of this.waiting.values()) waiter.reject(err);
      this.waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!this.closed) fail(new Error(`audit commit thread exited (code ${code})`));
    });
    return worker;
  }
}
