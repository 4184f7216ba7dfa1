import type { SqliteConnection } from '@switchboard/persistence';
import type { AuditEntry } from '../audit.types.js';
import { appendRowInTransaction } from './pruning-marker.js';

/**
 * Appends one row to the chain from outside the daemon's writer (the command line's
 * administrative actions), in its own BEGIN IMMEDIATE transaction: the head is read under
 * the write lock, as the writer reads it, so a daemon writing to the same file meanwhile
 * chains on from this row.
 */
export function appendRow(db: SqliteConnection, row: AuditEntry): { id: number; hash: string } {
  const append = db.transaction(() => appendRowInTransaction(db, row)) as unknown as { immediate: () => { id: number; hash: string } };
  return append.immediate();
}
