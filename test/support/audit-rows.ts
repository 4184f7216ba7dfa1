import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { readJournal } from '@switchboard/audit';

export type AuditRowRecord = Record<string, unknown>;

/** The longest auditRows waits for a daemon's journal to be moved (a dead daemon's never is). */
const SETTLE_TIMEOUT_MS = 5_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * The daemon's audit rows matching `where`, read the way an auditor with file access would:
 * a second, read-only connection to `<dataDir>/switchboard.sqlite`.
 *
 * Strict mode answers a call once its row is in the daemon's journal, and moves the row
 * into the database within `audit.flushMs`; so this first waits (synchronously: the daemon
 * is another process) until no journal in the data dir holds a row, as every call answered
 * before it is then in the database.
 */
export function auditRows(dataDir: string, where = '1 = 1', ...params: unknown[]): AuditRowRecord[] {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (journaledRows(dataDir) > 0 && Date.now() < deadline) Atomics.wait(sleeper, 0, 0, 10);
  const db = new Database(join(dataDir, 'switchboard.sqlite'), { readonly: true });
  try {
    return db.prepare(`SELECT * FROM audit_record WHERE ${where} ORDER BY id`).all(...params) as AuditRowRecord[];
  } finally {
    db.close();
  }
}

/** Rows in the data dir's journals not yet emptied, as the daemon's own reader sees them. */
export function journaledRows(dataDir: string): number {
  const dir = join(dataDir, 'audit-journal');
  if (!existsSync(dir)) return 0;
  let rows = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.journal'))) {
    try {
      rows += readJournal(join(dir, file)).rows.length;
    } catch {
      // removed meanwhile
    }
  }
  return rows;
}
