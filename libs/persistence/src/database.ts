import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DataSource, type MixedList } from 'typeorm';

/** The database file inside the data directory. */
export const DATABASE_FILE = 'switchboard.sqlite';

/**
 * `normal`: a commit survives the process being killed (SIGKILL included) but not a power
 * cut or kernel crash; `full`: it also survives those, for one fsync per commit.
 */
export type SyncMode = 'normal' | 'full';

export interface DatabaseOptions {
  /** Path of the SQLite file; its directory is created. */
  file: string;
  /** Entity classes, listed explicitly (never a glob: the same list works from src and dist). */
  entities: MixedList<Function>;
  migrations: MixedList<Function>;
  synchronous?: SyncMode;
  /** How long a statement waits for another connection's lock before SQLITE_BUSY. */
  busyTimeoutMs?: number;
  readonly?: boolean;
}

/** What better-sqlite3 offers that the audit writer uses directly (prepared statements). */
export interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  exec(sql: string): void;
  readonly inTransaction: boolean;
}

export interface SqliteStatement {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
}

/**
 * Opens (creating it if need be) the SQLite database through TypeORM on better-sqlite3:
 * WAL so readers (the CLI, the admin API) never block the writer, a busy timeout so a
 * second process waits instead of failing at once, and foreign keys enforced. The schema
 * comes only from migrations; `synchronize` is never on.
 */
export async function openDatabase(options: DatabaseOptions): Promise<DataSource> {
  if (!options.readonly) {
    mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });
    // Created owner-only before SQLite opens it (SQLite gives its -wal and -shm files the
    // same mode): it holds the audit log and API key hashes, whatever the umask.
    try {
      closeSync(openSync(options.file, 'wx', 0o600));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const synchronous = (options.synchronous ?? 'full').toUpperCase();
  const dataSource = new DataSource({
    type: 'better-sqlite3',
    database: options.file,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTransactionMode: 'each',
    synchronize: false,
    readonly: options.readonly ?? false,
    fileMustExist: options.readonly ?? false,
    timeout: options.busyTimeoutMs ?? 5000,
    enableWAL: !options.readonly,
    prepareDatabase: (db: SqliteConnection) => {
      if (!options.readonly) db.pragma(`synchronous = ${synchronous}`);
    },
  });
  await dataSource.initialize();
  return dataSource;
}

/** The better-sqlite3 handle under a DataSource, for prepared-statement hot paths. */
export function sqliteConnection(dataSource: DataSource): SqliteConnection {
  return (dataSource.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection;
}
