import { createHash } from 'node:crypto';
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
        'table:audit_entry',
        'view:audit_record',
        'table:audit_chain',
        'table:migrations',
        'index:audit_entry_at',
        'index:audit_entry_principal',
        'table:api_key',
        'index:api_key_active_name',
        'table:tool_pin',
        'table:principal_secret',
        'table:audit_journal_mark',
      ]),
    );
  });

  it('leaves only the time and principal indexes', async () => {
    const ds = await fresh();
    await migrate(ds);
    expect(objects(ds).filter((o) => o.startsWith('index:audit'))).toEqual(['index:audit_entry_at', 'index:audit_entry_principal']);
  });

  it('indexes principal alone, so that one principal\'s entries are in id order', async () => {
    const ds = await fresh();
    await migrate(ds);
    const columns = sqliteConnection(ds).prepare(`SELECT name FROM pragma_index_info('audit_entry_principal')`).all();
    expect(columns).toEqual([{ name: 'principal' }]);
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

  it('the JSON migration keeps existing rows, their hashes, and what the audit_record view shows', async () => {
    const ds = await fresh();
    const db = sqliteConnection(ds);
    // Back to the column-per-field schema, with a row written as the old writer wrote it.
    await migrate(ds);
    while (!objects(ds).includes('table:audit_record')) await ds.undoLastMigration();
    const old = { id: 1, at: 1_795_000_000_000, principal: 'alice', auth_method: 'api-key', session_id: 's', transport: 'stdio',
      client_name: 'host', client_version: '1', protocol_version: '2025-06-18', upstream: 'fx', method: 'tools/call',
      name: 'fx__echo', original_name: 'echo', arguments: '{"text":"h\u00e9 \\"quoted\\""}', arguments_truncated: 0,
      arguments_digest: 'hmac-sha256:00', decision: 'allowed', rule: 'default-allow', outcome: 'ok', error_code: null,
      error_message: null, latency_ms: 1.25, response_bytes: 42, request_id: '7', trace_id: 'ab' };
    const record = JSON.stringify(Object.values(old));
    const hash = createHash('sha256').update(`${GENESIS}\n${record}`).digest('hex');
    db.prepare(`INSERT INTO audit_record (${Object.keys(old).join(', ')}, prev_hash, hash) VALUES (${Object.keys(old).map(() => '?').join(', ')}, ?, ?)`)
      .run(...Object.values(old), GENESIS, hash);

    await migrate(ds);
    expect(db.prepare('SELECT id, at, principal, record, prev_hash, hash FROM audit_entry').get()).toEqual({
      id: 1, at: old.at, principal: 'alice', record, prev_hash: GENESIS, hash,
    });
    expect(db.prepare('SELECT * FROM audit_record').get()).toEqual({ ...old, prev_hash: GENESIS, hash });

    // And back: the columns again, same values.
    while (!objects(ds).includes('table:audit_record')) await ds.undoLastMigration();
    expect(db.prepare('SELECT * FROM audit_record').get()).toEqual({ ...old, prev_hash: GENESIS, hash });
  });
});

describe('key rotation (1795248000000)', () => {
  const ROTATION = 'ApiKeyRotation1795248000000';
  const insertKey = (ds: DataSource, id: number, name: string, revokedAt: number | null) =>
    sqliteConnection(ds)
      .prepare(`INSERT INTO api_key (id, name, prefix, key_hash, roles, created_at, revoked_at) VALUES (?, ?, 'sbk_abcdef', ?, '["dev"]', 1, ?)`)
      .run(id, name, `hash-${id}`, revokedAt);

  it('applies to a database made by the migrations before it, keeping its keys, which are replaced by none', async () => {
    const ds = await fresh();
    await migrate(ds);
    while ((await appliedNames(ds)).includes(ROTATION)) await ds.undoLastMigration();
    insertKey(ds, 1, 'frank', 5);
    insertKey(ds, 2, 'frank', null);
    expect(await migrate(ds)).toContain(ROTATION);
    const db = sqliteConnection(ds);
    expect(db.prepare('SELECT id, name, revoked_at, rotated_at, replaced_by FROM api_key ORDER BY id').all()).toEqual([
      { id: 1, name: 'frank', revoked_at: 5, rotated_at: null, replaced_by: null },
      { id: 2, name: 'frank', revoked_at: null, rotated_at: null, replaced_by: null },
    ]);
  });

  it('lets a name have a second key not revoked only while the first is rotated', async () => {
    const ds = await fresh();
    await migrate(ds);
    const db = sqliteConnection(ds);
    insertKey(ds, 1, 'frank', null);
    // A plain second key of the name is still refused by the index.
    expect(() => insertKey(ds, 2, 'frank', null)).toThrow(/UNIQUE constraint failed: api_key.name/);
    db.prepare('UPDATE api_key SET rotated_at = 10 WHERE id = 1').run();
    insertKey(ds, 2, 'frank', null);
    db.prepare('UPDATE api_key SET replaced_by = 2 WHERE id = 1').run();
    // The new key is the name's one unrotated key: a third is refused.
    expect(() => insertKey(ds, 3, 'frank', null)).toThrow(/UNIQUE constraint failed: api_key.name/);
  });

  it('reverts by revoking the keys still in their overlap, so the old index holds again', async () => {
    const ds = await fresh();
    await migrate(ds);
    const db = sqliteConnection(ds);
    insertKey(ds, 1, 'frank', null);
    db.prepare('UPDATE api_key SET rotated_at = 10, expires_at = 99 WHERE id = 1').run();
    insertKey(ds, 2, 'frank', null);
    await ds.undoLastMigration();
    expect(db.prepare('SELECT id, revoked_at FROM api_key ORDER BY id').all()).toEqual([
      { id: 1, revoked_at: 10 },
      { id: 2, revoked_at: null },
    ]);
    expect(() => insertKey(ds, 3, 'frank', null)).toThrow(/UNIQUE constraint failed: api_key.name/);
  });
});

async function appliedNames(ds: DataSource): Promise<string[]> {
  return (sqliteConnection(ds).prepare('SELECT name FROM migrations').all() as { name: string }[]).map((m) => m.name);
}

const GENESIS = '0'.repeat(64);
