import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { entry, tempDatabase, writerFor } from '../../test-support/temp-db.js';
import { verifyChain } from '../chain/verify-chain.js';
import { AUDIT_UNAVAILABLE_CODE, AuditUnavailableError } from './audit-writer.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) if (ds.isInitialized) await ds.destroy();
  open = [];
});

async function setup() {
  const t = await tempDatabase();
  open.push(t.dataSource);
  const count = () => (t.db.prepare('SELECT COUNT(*) AS n FROM audit_record').get() as { n: number }).n;
  return { ...t, count };
}

const nextTurn = () => new Promise((r) => setImmediate(r));

describe('AuditWriter, strict', () => {
  it('resolves an append only once its row is committed', async () => {
    const { db, count } = await setup();
    const writer = writerFor(db);
    const written = writer.append(entry());
    expect(count()).toBe(0);
    await written;
    expect(count()).toBe(1);
  });

  it('commits every row appended in one turn in a single transaction', async () => {
    const { db, count } = await setup();
    const writer = writerFor(db);
    await Promise.all(Array.from({ length: 200 }, () => writer.append(entry())));
    expect(count()).toBe(200);
    expect(writer.status()).toMatchObject({ commits: 1, committedRows: 200, writable: true, queuedRows: 0 });
  });

  it('refuses while the database is locked by another process, then recovers and keeps every row', async () => {
    const { db, dataSource, file, count } = await setup();
    const writer = writerFor(db);
    const other = new Database(file);
    other.prepare('BEGIN IMMEDIATE').run();
    const failed = writer.append(entry({ requestId: 'withheld' }));
    await expect(failed).rejects.toBeInstanceOf(AuditUnavailableError);
    expect(writer.writable).toBe(false);
    expect(writer.status().failure).toMatch(/SQLITE_BUSY/);
    expect(() => writer.assertWritable()).toThrow(AuditUnavailableError);

    other.prepare('COMMIT').run();
    other.close();
    await new Promise((r) => setTimeout(r, 400)); // the first retries come after 100 and 200 ms
    expect(writer.writable).toBe(true);
    expect(count()).toBe(1);
    // The host was not given its answer, and the row says so.
    const row = db.prepare('SELECT outcome, error_code AS code, error_message AS message FROM audit_record').get() as Record<string, unknown>;
    expect(row).toMatchObject({ outcome: 'error', code: AUDIT_UNAVAILABLE_CODE });
    expect(row.message).toMatch(/withheld.*upstream outcome: ok/);
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 1 });
  });

  it('a full disk fails loudly and loses nothing once space is back', async () => {
    const { db, count } = await setup();
    const writer = writerFor(db, 'relaxed');
    // SQLite's own "database or disk is full": cap the file at its current size.
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);
    for (let i = 0; i < 50; i++) void writer.append(entry({ arguments: JSON.stringify({ pad: 'x'.repeat(2000) }) }));
    writer.flush();
    expect(writer.writable).toBe(false);
    expect(writer.status()).toMatchObject({ queuedRows: 50 });
    expect(writer.status().failure).toMatch(/SQLITE_FULL/);
    db.pragma('max_page_count = 1073741823');
    writer.flush();
    expect(writer.writable).toBe(true);
    expect(count()).toBe(50);
  });
});

describe('AuditWriter, relaxed', () => {
  it('answers at once and commits within flushMs', async () => {
    const { db, count } = await setup();
    const writer = writerFor(db, 'relaxed');
    await writer.append(entry());
    expect(count()).toBe(0);
    await new Promise((r) => setTimeout(r, 60));
    expect(count()).toBe(1);
  });

  it('keeps serving while the log cannot be written, and records how many rows it had to drop', async () => {
    const { db, file, count, dataSource } = await setup();
    const writer = writerFor(db, 'relaxed', 1000);
    const other = new Database(file);
    other.prepare('BEGIN IMMEDIATE').run();
    for (let i = 0; i < 1005; i++) await writer.append(entry());
    writer.flush();
    expect(writer.status()).toMatchObject({ writable: false, queuedRows: 1000, lostRows: 5 });
    other.prepare('COMMIT').run();
    other.close();
    writer.flush();
    expect(count()).toBe(1001);
    const marker = db.prepare(`SELECT method, rule, arguments FROM audit_record ORDER BY id DESC LIMIT 1`).get() as Record<string, string>;
    expect(marker).toMatchObject({ method: 'audit/rows-lost', rule: 'audit:queue-full' });
    expect(JSON.parse(marker.arguments)).toMatchObject({ rows: 5 });
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 1001 });
  });

  it('close() commits what is queued', async () => {
    const { db, count } = await setup();
    const writer = writerFor(db, 'relaxed');
    for (let i = 0; i < 10; i++) void writer.append(entry());
    writer.close();
    expect(count()).toBe(10);
    expect(() => writer.append(entry())).toThrow(/closed/);
  });
});

describe('AuditWriter, two writers on one file', () => {
  it('extend one chain (the head is read under the write lock)', async () => {
    const a = await setup();
    const second = await tempDatabaseOn(a.file);
    const wa = writerFor(a.db);
    const wb = writerFor(second.db);
    for (let i = 0; i < 5; i++) {
      await wa.append(entry());
      await wb.append(entry());
      await nextTurn();
    }
    expect(a.count()).toBe(10);
    expect(await verifyChain(a.dataSource)).toMatchObject({ ok: true, rows: 10 });
  });
});

async function tempDatabaseOn(file: string) {
  const { openDatabase, sqliteConnection } = await import('@switchboard/persistence');
  const { AUDIT_ENTITIES } = await import('../audit-record.entity.js');
  const dataSource = await openDatabase({ file, entities: AUDIT_ENTITIES, migrations: [] });
  open.push(dataSource);
  return { dataSource, db: sqliteConnection(dataSource) };
}
