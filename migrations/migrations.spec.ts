import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDatabase, sqliteConnection } from '@switchboard/persistence';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { MIGRATIONS } from './index.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) if (ds.isInitialized) await ds.destroy();
  open = [];
});

async function fresh(): Promise<DataSource> {
  const file = join(mkdtempSync(join(tmpdir(), 'sb-migrate-')), 'switchboard.sqlite');
  const ds = await openDatabase({ file, entities: [], migrations: MIGRATIONS });
  open.push(ds);
  return ds;
}

const objects = (ds: DataSource) =>
  (
    sqliteConnection(ds)
      .prepare(`SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`)
      .all() as { type: string; name: string }[]
  ).map((o) => `${o.type}:${o.name}`);

describe('migrations', () => {
  it('every migration applies to a fresh database, in order, and records itself', async () => {
    const ds = await fresh();
    const applied = await migrate(ds);
    expect(applied).toEqual(MIGRATIONS.map((m) => m.name));
    expect(objects(ds)).toEqual(
      expect.arrayContaining([
        'table:audit_record',
        'table:audit_chain',
        'table:migrations',
        'index:audit_record_at',
        'index:audit_record_principal',
      ]),
    );
  });

  it('the second migration leaves only the time and principal indexes', async () => {
    const ds = await fresh();
    await migrate(ds);
    expect(objects(ds).filter((o) => o.startsWith('index:'))).toEqual(['index:audit_record_at', 'index:audit_record_principal']);
  });

  it('a second run applies nothing', async () => {
    const ds = await fresh();
    await migrate(ds);
    expect(await migrate(ds)).toEqual([]);
  });

  it('every migration reverts cleanly, newest first', async () => {
    const ds = await fresh();
    await migrate(ds);
    for (let i = 0; i < MIGRATIONS.length; i++) await ds.undoLastMigration();
    expect(objects(ds)).toEqual(['table:migrations']);
  });

  it('the audit table refuses values outside its vocabulary', async () => {
    const ds = await fresh();
    await migrate(ds);
    const insert = sqliteConnection(ds).prepare(
      `INSERT INTO audit_record (id, at, principal, auth_method, method, decision, prev_hash, hash) VALUES (1, 0, 'p', 'a', 'm', ?, 'x', 'y')`,
    );
    expect(() => insert.run('maybe')).toThrow(/CHECK constraint/);
    expect(() => insert.run('allowed')).not.toThrow();
  });
});
