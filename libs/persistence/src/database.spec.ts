import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataSource, QueryRunner } from 'typeorm';
import { openDatabase, sqliteConnection } from './database.js';
import { migrate } from './migrate.js';
import { SchemaMismatchCode, SchemaMismatchError } from './persistence.errors.js';
import { schemaState } from './schema-state.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) if (ds.isInitialized) await ds.destroy();
  open = [];
});

const dir = () => mkdtempSync(join(tmpdir(), 'sb-db-'));

async function opened(options: Partial<Parameters<typeof openDatabase>[0]> = {}) {
  const ds = await openDatabase({ file: join(dir(), 'nested', 'switchboard.sqlite'), entities: [], migrations: [], ...options });
  open.push(ds);
  return sqliteConnection(ds);
}

describe('openDatabase', () => {
  it('creates the database, its WAL and its directory for the owner only, whatever the umask', async () => {
    const base = dir();
    const file = join(base, 'nested', 'switchboard.sqlite');
    const before = process.umask(0o022);
    try {
      const ds = await openDatabase({ file, entities: [], migrations: [] });
      open.push(ds);
      sqliteConnection(ds).exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    } finally {
      process.umask(before);
    }
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(`${file}-wal`).mode & 0o777).toBe(0o600);
    expect(statSync(join(base, 'nested')).mode & 0o777).toBe(0o700);
  });

  it('creates the directory and sets WAL, foreign keys, the busy timeout and full sync by default', async () => {
    const db = await opened({ busyTimeoutMs: 1234 });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(1234);
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
  });

  it('synchronous: normal', async () => {
    const db = await opened({ synchronous: 'normal' });
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
  });

  it('read-only opening never creates a file', async () => {
    await expect(
      openDatabase({ file: join(dir(), 'missing.sqlite'), entities: [], migrations: [], readonly: true }),
    ).rejects.toThrow();
  });
});

/** A migration that creates one table, named as TypeORM names them (`<Name><timestamp>`). */
const creating = (table: string, timestamp: number) =>
  class {
    name = `Create${table}${timestamp}`;
    async up(q: QueryRunner) {
      await q.query(`CREATE TABLE ${table} (x)`);
    }
    async down() {}
  };

describe('migrate on a database a newer build migrated', () => {
  it('refuses it, naming the migrations this build does not know, and changes nothing', async () => {
    const file = join(dir(), 'switchboard.sqlite');
    const older = await openDatabase({ file, entities: [], migrations: [creating('one', 1700000000001)] });
    await migrate(older);
    // What a newer build leaves: a migration recorded that this one has never heard of.
    sqliteConnection(older).prepare(`INSERT INTO migrations (timestamp, name) VALUES (1899999999999, 'FutureThing1899999999999')`).run();
    await older.destroy();

    const ds = await openDatabase({ file, entities: [], migrations: [creating('one', 1700000000001), creating('two', 1700000000002)] });
    open.push(ds);
    const refused = await migrate(ds).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(SchemaMismatchError);
    expect(refused).toMatchObject({ code: SchemaMismatchCode.Newer, file, migrations: ['FutureThing1899999999999'] });
    expect((refused as Error).message).toBe(
      `the database ${file} was migrated by a newer Switchboard (migration this version does not know: FutureThing1899999999999); ` +
        'run that version, or restore a backup taken before the upgrade',
    );
    const db = sqliteConnection(ds);
    expect(db.prepare(`SELECT name FROM sqlite_master WHERE name = 'two'`).get(), 'the pending migration did not run').toBeUndefined();
    expect(db.inTransaction).toBe(false);
  });
});

describe('schemaState', () => {
  it('names what the file lacks, what it has that this build does not know, and whether it has anything at all', async () => {
    const file = join(dir(), 'switchboard.sqlite');
    const ds = await openDatabase({ file, entities: [], migrations: [creating('one', 1700000000001), creating('two', 1700000000002)] });
    open.push(ds);
    expect(schemaState(ds)).toEqual({ pending: ['Createone1700000000001', 'Createtwo1700000000002'], unknown: [], fresh: true });
    await migrate(ds);
    expect(schemaState(ds)).toEqual({ pending: [], unknown: [], fresh: false });
    sqliteConnection(ds).exec(`DELETE FROM migrations WHERE name = 'Createtwo1700000000002'; INSERT INTO migrations (timestamp, name) VALUES (1700000000003, 'Later1700000000003')`);
    expect(schemaState(ds)).toEqual({ pending: ['Createtwo1700000000002'], unknown: ['Later1700000000003'], fresh: false });
  });
});
