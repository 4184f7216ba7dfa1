import { join } from 'node:path';
import Database from 'better-sqlite3';

export type AuditRowRecord = Record<string, unknown>;

/**
 * The daemon's audit rows matching `where`, read the way an auditor with file access would:
 * a second, read-only connection to `<dataDir>/switchboard.sqlite`.
 */
export function auditRows(dataDir: string, where = '1 = 1', ...params: unknown[]): AuditRowRecord[] {
  const db = new Database(join(dataDir, 'switchboard.sqlite'), { readonly: true });
  try {
    return db.prepare(`SELECT * FROM audit_record WHERE ${where} ORDER BY id`).all(...params) as AuditRowRecord[];
  } finally {
    db.close();
  }
}
