import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { SqliteConnection } from '@switchboard/persistence';
import type { AuditEntry } from '../audit.types.js';
import { RowInserter } from './row-insert.js';
import type { CommitReply, CommitRequest, CommitWorkerOptions } from './worker-committer.js';

/*
 * The audit writer's thread: its own better-sqlite3 connection to the (already migrated)
 * database, one transaction per batch it is sent. Everything SQLite does for a commit, the
 * fsync included, happens here, off the daemon's event loop.
 */
const options = workerData as CommitWorkerOptions;
const db = new Database(options.file, { timeout: options.busyTimeoutMs });
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${options.synchronous.toUpperCase()}`);
db.pragma('foreign_keys = ON');
const inserter = new RowInserter(db as unknown as SqliteConnection);

parentPort!.on('message', (request: CommitRequest | 'close') => {
  if (request === 'close') {
    db.close();
    parentPort!.close();
    return;
  }
  let reply: CommitReply;
  try {
    reply = { id: request.id, head: inserter.append(request.entries as AuditEntry[]) };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    reply = { id: request.id, error: { code: e.code, message: String(e.message ?? err) } };
  }
  parentPort!.postMessage(reply);
});
