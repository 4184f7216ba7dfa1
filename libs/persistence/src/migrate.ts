import type { DataSource } from 'typeorm';
import { sqliteConnection } from './database.js';
import { SchemaMismatchCode, SchemaMismatchError } from './persistence.errors.js';
import { schemaState } from './schema-state.js';

/**
 * Applies the migrations not yet applied, all in one transaction; returns their names,
 * oldest first. A database that has applied migrations this build does not know (a newer
 * Switchboard's) is refused with a SchemaMismatchError, before anything runs: TypeORM would
 * apply the pending ones around them and report the file up to date.
 *
 * The write lock is taken (BEGIN IMMEDIATE, waiting out the busy timeout) before TypeORM
 * reads which migrations are applied. TypeORM reads that list outside any transaction, so
 * two processes starting on a fresh file could both find a migration pending and, when it
 * can run twice without failing (a DROP and CREATE INDEX), both run it and record it twice.
 * Under the lock the second process reads the first one's list (and a newer build's
 * migration that committed meanwhile is seen). Foreign keys are off while migrating, as
 * TypeORM has them for its own migration transactions (a table rebuild must not trip
 * them); SQLite ignores that pragma inside a transaction, so it comes first.
 */
export async function migrate(dataSource: DataSource): Promise<string[]> {
  const db = sqliteConnection(dataSource);
  db.pragma('foreign_keys = OFF');
  try {
    db.exec('BEGIN IMMEDIATE');
    try {
      const { unknown } = schemaState(dataSource);
      if (unknown.length > 0) throw new SchemaMismatchError(SchemaMismatchCode.Newer, String(dataSource.options.database), unknown);
      const applied = await dataSource.runMigrations({ transaction: 'none' });
      db.exec('COMMIT');
      return applied.map((m) => m.name);
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
  } finally {
    db.pragma('foreign_keys = ON');
  }
}
