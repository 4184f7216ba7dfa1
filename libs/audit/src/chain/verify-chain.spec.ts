import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { entry, tempDatabase, writerFor } from '../../test-support/temp-db.js';
import { pruneBefore } from '../retention/prune.js';
import { verifyChain } from './verify-chain.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

async function logWithRows(count: number, at = (i: number) => Date.now() + i) {
  const t = await tempDatabase();
  open.push(t.dataSource);
  const writer = writerFor(t.db);
  for (let i = 0; i < count; i++) void writer.append(entry({ at: at(i), name: `tool${i}` }));
  await writer.flush();
  return t;
}

/** Tampering happens outside the gateway: another connection, as an attacker with file access would. */
function tamper(file: string, sql: string, ...params: unknown[]) {
  const other = new Database(file);
  other.prepare(sql).run(...params);
  other.close();
}

describe('verifyChain', () => {
  it('accepts an untouched log and reports its head', async () => {
    const { dataSource } = await logWithRows(25);
    const verdict = await verifyChain(dataSource);
    expect(verdict).toMatchObject({ ok: true, rows: 25, firstId: 1, lastId: 25 });
    if (verdict.ok) expect(verdict.headHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('accepts an empty log', async () => {
    const { dataSource } = await logWithRows(0);
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 0 });
  });

  it('finds an edited row', async () => {
    const { dataSource, file } = await logWithRows(10);
    tamper(file, `UPDATE audit_entry SET record = json_set(record, '$[13]', '{"text":"changed"}') WHERE id = 6`);
    expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 6, rows: 5 });
  });

  it('finds an edited decision even when nothing else changed', async () => {
    const { dataSource, file } = await logWithRows(10);
    tamper(file, `UPDATE audit_entry SET record = json_set(record, '$[16]', 'denied', '$[18]', NULL) WHERE id = 3`);
    expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 3 });
  });

  it('finds an edited principal or time column, which filters read', async () => {
    const { dataSource, file } = await logWithRows(10);
    tamper(file, `UPDATE audit_entry SET principal = 'mallory' WHERE id = 7`);
    expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 7, rows: 6 });
  });

  it('finds a deleted row', async () => {
    const { dataSource, file } = await logWithRows(10);
    tamper(file, 'DELETE FROM audit_entry WHERE id = 4');
    expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 5 });
  });

  it('finds a deleted row even when the rest was renumbered', async () => {
    const { dataSource, file } = await logWithRows(10);
    tamper(file, 'DELETE FROM audit_entry WHERE id = 4');
    tamper(file, 'UPDATE audit_entry SET id = id - 1 WHERE id > 4');
    expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 4 });
  });

  it('finds an inserted row', async () => {
    const { dataSource, file } = await logWithRows(10);
    // Make room, then slip a copy of row 3 (hash and all) in as row 4.
    tamper(file, 'UPDATE audit_entry SET id = id + 100 WHERE id > 3');
    tamper(file, 'UPDATE audit_entry SET id = id - 99 WHERE id > 100');
    tamper(
      file,
      `INSERT INTO audit_entry SELECT 4, at, principal, record, prev_hash, hash FROM audit_entry WHERE id = 3`,
    );
    expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 4 });
  });

  it('still verifies after retention pruned the oldest rows, and still finds edits after that', async () => {
    const now = Date.now();
    const { dataSource, db, file } = await logWithRows(30, (i) => (i < 20 ? now - 100 * 86_400_000 : now));
    const pruned = await pruneBefore(db, now - 90 * 86_400_000, 7);
    expect(pruned).toEqual({ rows: 20, throughId: 20 });
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 10, firstId: 21, prunedRows: 20 });
    tamper(file, 'DELETE FROM audit_entry WHERE id = 21');
    expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 22 });
  });

  it('new rows after pruning extend the same chain', async () => {
    const now = Date.now();
    const t = await logWithRows(5, () => now - 100 * 86_400_000);
    await pruneBefore(t.db, now);
    const writer = writerFor(t.db);
    void writer.append(entry());
    await writer.flush();
    // The newest row is never pruned: 4 removed, 1 kept, 1 new.
    expect(await verifyChain(t.dataSource)).toMatchObject({ ok: true, rows: 2, firstId: 5, lastId: 6, prunedRows: 4 });
  });
});
