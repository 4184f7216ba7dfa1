import Database from 'better-sqlite3';
import type { DataSource } from 'typeorm';
import { sqliteConnection } from './database.js';

/**
 * Copies the database `dataSource` reads into `file` with SQLite's online backup API, which
 * reads through the WAL: a copy of the file alone (`cp`) lacks the commits still in its
 * `-wal`. Run inside a read transaction the caller holds, the copy is the database as that
 * snapshot saw it, however long it takes and whatever the daemon commits meanwhile; outside
 * one, SQLite restarts a backup whenever another connection writes. `file` exists already,
 * empty (the caller creates it, owner-only, refusing to overwrite one), and its directory is
 * writable.
 *
 * The copy is then switched to rollback-journal mode: a WAL-mode file is read only through
 * a `-shm` file beside it, which SQLite cannot create on read-only storage; this one needs
 * nothing beside it. The daemon turns WAL on again when it opens a restored copy.
 */
export async function backupDatabase(dataSource: DataSource, file: string): Promise<void> {
  // better-sqlite3's own handle: the SqliteConnection interface leaves backup out.
  await (sqliteConnection(dataSource) as unknown as Database.Database).backup(file);
  const copy = new Database(file, { fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
}
