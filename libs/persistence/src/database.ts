import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DataSource, type MixedList } from 'typeorm';
import { imageDriver, walCopyImage, walCopyProblem, walNeedsShmMessage } from './wal-copy.js';

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
 * comes only from migrations; `synchronize` is never on. `readonly` creates nothing and
 * writes nothing (openReadOnly).
 */
export async function openDatabase(options: DatabaseOptions): Promise<DataSource> {
  if (options.readonly) return openReadOnly(options);
  mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });
  // Created owner-only before SQLite opens it (SQLite gives its -wal and -shm files the
  // same mode): it holds the audit log and API key hashes, whatever the umask.
  try {
    closeSync(openSync(options.file, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const synchronous = (options.synchronous ?? 'full').toUpperCase();
  return initialized(options, {
    enableWAL: true,
    prepareDatabase: (db) => void db.pragma(`synchronous = ${synchronous}`),
  });
}

/**
 * A read-only connection, read once so that what cannot be read fails here: a file that is
 * no database, or a WAL-mode copy in a directory SQLite cannot write (wal-copy.ts), which is
 * then read from an image in memory when the file alone is the whole database.
 */
async function openReadOnly(options: DatabaseOptions): Promise<DataSource> {
  const dataSource = await initialized(options, { readonly: true, fileMustExist: true });
  try {
    sqliteConnection(dataSource).prepare('SELECT count(*) FROM sqlite_master').get();
    return dataSource;
  } catch (err) {
    await dataSource.destroy();
    const problem = walCopyProblem(err, options.file);
    if (problem === undefined) throw err;
    if (problem === 'wal-needs-shm') throw new Error(walNeedsShmMessage(options.file), { cause: err });
    return initialized(options, { readonly: true, driver: imageDriver(walCopyImage(options.file)) });
  }
}

/** The better-sqlite3 options of TypeORM's DataSource that differ between the ways of opening. */
interface ConnectionOptions {
  readonly?: boolean;
  fileMustExist?: boolean;
  enableWAL?: boolean;
  prepareDatabase?: (db: SqliteConnection) => void;
  /** Constructs the connection in better-sqlite3's place. */
  driver?: unknown;
}

function initialized(options: DatabaseOptions, driverOptions: ConnectionOptions): Promise<DataSource> {
  return new DataSource({
    type: 'better-sqlite3',
    database: options.file,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTransactionMode: 'each',
    synchronize: false,
    timeout: options.busyTimeoutMs ?? 5000,
    ...driverOptions,
  }).initialize();
}

/** The better-sqlite3 handle under a DataSource, for prepared-statement hot paths. */
export function sqliteConnection(dataSource: DataSource): SqliteConnection {
  return (dataSource.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection;
}
