import type { DataSource } from 'typeorm';
import { sqliteConnection } from './database.js';

/** Which migrations a database has applied, against the ones its DataSource was given. */
export interface SchemaState {
  /** Known here and not applied there, oldest first: the file is older than this build (or new). */
  pending: string[];
  /** Applied there and unknown here, in the order they ran: a newer build migrated the file. */
  unknown: string[];
  /** No migration applied at all: a file just created, that nobody has used yet. */
  fresh: boolean;
}

/** Reads the `migrations` table TypeORM keeps; a file without one has applied none. */
export function schemaState(dataSource: DataSource): SchemaState {
  const db = sqliteConnection(dataSource);
  const known = dataSource.migrations.map((m) => m.name ?? m.constructor.name);
  const table = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'`).get();
  const applied = table ? (db.prepare('SELECT name FROM migrations ORDER BY id').all() as { name: string }[]).map((r) => r.name) : [];
  const appliedSet = new Set(applied);
  const knownSet = new Set(known);
  return {
    pending: known.filter((name) => !appliedSet.has(name)),
    unknown: applied.filter((name) => !knownSet.has(name)),
    fresh: applied.length === 0,
  };
}
