import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '@switchboard/migrations';
import { migrate, openDatabase, sqliteConnection } from '@switchboard/persistence';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { entry, tempDatabase, writerFor } from '../../test-support/temp-db.js';
import { pruneBefore } from '../retention/prune.js';
import { systemEntry } from '../system-entry.js';
import { verifyChain } from './verify-chain.js';
import { readerSchemaProblem } from './reader-schema.js';
import { AUDIT_ENTITIES } from '../audit-record.entity.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

const MINUTE = 60_000;
const DAY = 86_400_000;

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

  describe('the schema the readers rely on', () => {
    it('refuses a rewritten audit_record view, through which every export and page would lie', async () => {
      const { dataSource, db, file } = await logWithRows(4);
      const view = (db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'audit_record'`).get() as { sql: string }).sql;
      tamper(file, 'DROP VIEW audit_record');
      tamper(file, view.replace(`json_extract(record, '$[16]') AS decision`, `'denied' AS decision`));
      // The rows are untouched and chain; the readers now see every call as denied.
      expect(db.prepare(`SELECT DISTINCT decision FROM audit_record`).all()).toEqual([{ decision: 'denied' }]);
      expect(await verifyChain(dataSource)).toMatchObject({ ok: false, schema: true, reason: expect.stringMatching(/audit_record view/) });
    });

    it('has nothing to say of a database from before the audit_record view (the next start migrates it)', async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'sb-audit-')), 'switchboard.sqlite');
      const dataSource = await openDatabase({ file, entities: AUDIT_ENTITIES, migrations: MIGRATIONS.slice(0, 2) });
      open.push(dataSource);
      await migrate(dataSource);
      expect(readerSchemaProblem(sqliteConnection(dataSource))).toBeUndefined();
    });

    it('refuses a view that leaves rows out', async () => {
      const { dataSource, db, file } = await logWithRows(4);
      const view = (db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'audit_record'`).get() as { sql: string }).sql;
      tamper(file, 'DROP VIEW audit_record');
      tamper(file, `${view} WHERE id <> 2`);
      expect(await verifyChain(dataSource)).toMatchObject({ ok: false, schema: true });
    });

    it('refuses a trigger that deletes rows as the writer appends them, though the chain goes on from the row before', async () => {
      const { dataSource, db, file } = await logWithRows(2);
      // Deleted after the insert, so the insert reports every row stored (the writer checks that).
      tamper(file, `CREATE TRIGGER hide_mallory AFTER INSERT ON audit_entry WHEN NEW.principal = 'mallory' BEGIN DELETE FROM audit_entry WHERE id = NEW.id; END`);
      const writer = writerFor(db);
      for (const principal of ['alice', 'mallory', 'bob', 'mallory']) {
        void writer.append(entry({ principal }));
        await writer.flush();
      }
      const principals = db.prepare('SELECT principal FROM audit_entry ORDER BY id').all();
      expect(principals).not.toContainEqual({ principal: 'mallory' });
      // Every row left chains: only the schema shows what happened.
      tamper(file, 'DROP TRIGGER hide_mallory');
      expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 4 });
      tamper(file, `CREATE TRIGGER hide_mallory AFTER INSERT ON audit_entry WHEN NEW.principal = 'mallory' BEGIN DELETE FROM audit_entry WHERE id = NEW.id; END`);
      expect(await verifyChain(dataSource)).toMatchObject({
        ok: false,
        schema: true,
        reason: expect.stringContaining('"hide_mallory" on "audit_entry"'),
      });
    });
  });

  it('still verifies after retention pruned the oldest rows, and still finds edits after that', async () => {
    const now = Date.now();
    const { dataSource, db, file } = await logWithRows(30, (i) => (i < 20 ? now - 100 * DAY : now));
    const pruned = await pruneBefore(db, now - 90 * DAY, 7);
    // The run's audit/pruned row is appended (id 31) with its first chunk.
    expect(pruned).toEqual({ rows: 20, throughId: 20, markerId: 31 });
    expect(await verifyChain(dataSource)).toMatchObject({
      ok: true,
      rows: 11,
      firstId: 21,
      lastId: 31,
      prunedRows: 20,
      pruning: { markerId: 31, format: 'anchored', throughId: 20, before: now - 90 * DAY },
    });
    tamper(file, 'DELETE FROM audit_entry WHERE id = 21');
    expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 22 });
  });

  it('new rows after pruning extend the same chain', async () => {
    const now = Date.now();
    const t = await logWithRows(5, () => now - 100 * DAY);
    await pruneBefore(t.db, now);
    const writer = writerFor(t.db);
    void writer.append(entry());
    await writer.flush();
    // The newest row is never pruned: 4 removed, 1 kept, the marker, 1 new.
    expect(await verifyChain(t.dataSource)).toMatchObject({ ok: true, rows: 3, firstId: 5, lastId: 7, prunedRows: 4 });
  });

  describe('the retention anchor', () => {
    const missing = /^rows before id 11 are missing and no pruning marker in the chain accounts for them/;

    it('refuses an anchor that no pruning marker accounts for (rows deleted, anchor forged)', async () => {
      const { dataSource, file } = await logWithRows(32);
      const before = await verifyChain(dataSource);
      // The reviewer's forgery: one statement deletes the oldest rows, one anchors the rest.
      tamper(file, 'DELETE FROM audit_entry WHERE id <= 10');
      tamper(file, `INSERT INTO audit_chain VALUES ('anchor', 10, (SELECT prev_hash FROM audit_entry WHERE id = 11), 10)`);
      const verdict = await verifyChain(dataSource);
      expect(verdict).toMatchObject({ ok: false, brokenAt: 11, anchor: true, reason: expect.stringMatching(missing) });
      expect(verdict.ok ? '' : verdict.reason).toMatch(/there is no audit\/pruned row/);
      // The rows that remain chain perfectly: the head alone would not have shown it.
      if (before.ok) expect(before.headHash).toMatch(/^[0-9a-f]{64}$/);
    });

    it('refuses an anchor beyond what the newest marker pruned', async () => {
      const now = Date.now();
      const { dataSource, db, file } = await logWithRows(30, (i) => (i < 5 ? now - 100 * DAY : now));
      await pruneBefore(db, now - 90 * DAY, 1000, now);
      expect(await verifyChain(dataSource)).toMatchObject({ ok: true, prunedRows: 5, pruning: { markerId: 31 } });
      // More rows deleted after a real pruning, and the anchor moved to hide them.
      tamper(file, 'DELETE FROM audit_entry WHERE id <= 10');
      tamper(
        file,
        `UPDATE audit_chain SET anchor_id = 10, anchor_hash = (SELECT prev_hash FROM audit_entry WHERE id = 11), pruned_rows = 10`,
      );
      const verdict = await verifyChain(dataSource);
      expect(verdict).toMatchObject({ ok: false, brokenAt: 11, anchor: true, reason: expect.stringMatching(missing) });
      expect(verdict.ok ? '' : verdict.reason).toMatch(/newest audit\/pruned row, id 31, pruned only through id 5/);
    });

    it("refuses an anchor whose count differs from the marker's", async () => {
      const now = Date.now();
      const { dataSource, db, file } = await logWithRows(30, (i) => (i < 10 ? now - 100 * DAY : now));
      await pruneBefore(db, now - 90 * DAY, 1000, now);
      tamper(file, 'UPDATE audit_chain SET pruned_rows = 3');
      expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 11, anchor: true, reason: expect.stringMatching(missing) });
    });

    it('refuses an anchor when the log is empty', async () => {
      const { dataSource, file } = await logWithRows(3);
      tamper(file, 'DELETE FROM audit_entry');
      tamper(file, `INSERT INTO audit_chain VALUES ('anchor', 3, '${'a'.repeat(64)}', 3)`);
      expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 4, anchor: true });
    });

    it("accepts two prunings, the second removing the first one's marker; only the newest marker counts", async () => {
      const now = Date.now();
      const { dataSource, db } = await logWithRows(20, (i) => (i < 10 ? now - 100 * DAY : now - 10 * MINUTE));
      const first = await pruneBefore(db, now - 90 * DAY, 4, now - 5 * MINUTE);
      expect(first).toEqual({ rows: 10, throughId: 10, markerId: 21 });
      expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 11, prunedRows: 10, pruning: { markerId: 21 } });

      const writer = writerFor(db);
      for (let i = 0; i < 3; i++) void writer.append(entry({ at: now }));
      await writer.flush();
      // A minute's retention, an hour later: rows 11-20 and the first marker (row 21) go.
      const second = await pruneBefore(db, now + 59 * MINUTE, 4, now + 60 * MINUTE);
      expect(second).toEqual({ rows: 13, throughId: 23, markerId: 25 });
      const verdict = await verifyChain(dataSource);
      expect(verdict).toMatchObject({
        ok: true,
        rows: 2,
        firstId: 24,
        lastId: 25,
        prunedRows: 23,
        pruning: { markerId: 25, throughId: 23, markerAt: now + 60 * MINUTE },
      });
      expect(verdict.ok && verdict.pruning?.inProgressThroughId).toBeFalsy();
    });

    it('accepts the anchor while a run is still removing its chunks', async () => {
      const now = Date.now();
      const { dataSource, db } = await logWithRows(30, (i) => (i < 20 ? now - 100 * DAY : now));
      const running = pruneBefore(db, now - 90 * DAY, 3, now);
      // The first chunk and the marker commit before pruneBefore first yields.
      expect(await verifyChain(dataSource)).toMatchObject({
        ok: true,
        firstId: 4,
        prunedRows: 3,
        pruning: { markerId: 31, throughId: 3, inProgressThroughId: 20 },
      });
      await running;
      expect(await verifyChain(dataSource)).toMatchObject({ ok: true, firstId: 21, prunedRows: 20, pruning: { throughId: 20 } });
    });

    it('a run that another one took over stops; the newest marker matches the anchor', async () => {
      const now = Date.now();
      // Rows 1-20 are 50 down to 31 days old; 21-30 new.
      const { dataSource, db } = await logWithRows(30, (i) => (i < 20 ? now - (50 - i) * DAY : now));
      const longer = pruneBefore(db, now - 30 * DAY, 3, now); // through 20: marker 31, rows 1-3 gone
      const shorter = await pruneBefore(db, now - 40 * DAY, 100, now); // through 10: marker 32
      expect(shorter).toEqual({ rows: 7, throughId: 10, markerId: 32 });
      expect(await longer).toEqual({ rows: 3, throughId: 3, markerId: 31 });
      expect(await verifyChain(dataSource)).toMatchObject({ ok: true, firstId: 11, prunedRows: 10, pruning: { markerId: 32 } });
    });

    it('accepts an anchor recorded by a marker of the older format when its throughId is the anchor', async () => {
      const now = Date.now();
      const { dataSource, db, file } = await logWithRows(12, (i) => (i < 10 ? now - 100 * DAY : now));
      // What earlier versions did: delete, move the anchor, then append a marker with rows, throughId, before.
      tamper(file, 'DELETE FROM audit_entry WHERE id <= 10');
      tamper(file, `INSERT INTO audit_chain VALUES ('anchor', 10, (SELECT prev_hash FROM audit_entry WHERE id = 11), 10)`);
      const writer = writerFor(db);
      const legacy = (throughId: number) =>
        writer.append({
          ...systemEntry(
            { method: 'audit/pruned', decision: 'allowed', rule: 'retention', outcome: 'ok', errorMessage: null },
            { rows: throughId, throughId, before: new Date(now - 90 * DAY).toISOString() },
          ),
          at: now,
        });
      void legacy(10);
      await writer.flush();
      expect(await verifyChain(dataSource)).toMatchObject({
        ok: true,
        rows: 3,
        prunedRows: 10,
        pruning: { markerId: 13, format: 'legacy', throughId: 10 },
      });
      // An older-format marker that names another id accounts for nothing.
      void legacy(9);
      await writer.flush();
      expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 11, anchor: true });
    });

    it('a row that only looks like a marker (another principal or rule) accounts for nothing', async () => {
      const { dataSource, db, file } = await logWithRows(12);
      tamper(file, 'DELETE FROM audit_entry WHERE id <= 10');
      tamper(file, `INSERT INTO audit_chain VALUES ('anchor', 10, (SELECT prev_hash FROM audit_entry WHERE id = 11), 10)`);
      const writer = writerFor(db);
      void writer.append(
        entry({
          method: 'audit/pruned',
          rule: 'retention',
          arguments: JSON.stringify({ rows: 10, throughId: 10, before: new Date(0).toISOString() }),
        }),
      );
      await writer.flush();
      expect(await verifyChain(dataSource)).toMatchObject({ ok: false, brokenAt: 11, anchor: true });
    });
  });
});
