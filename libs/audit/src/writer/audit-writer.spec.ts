import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '@switchboard/observability';
import { entry, tempDatabasePerTest, writerFor } from '../../test-support/temp-db.js';
import { verifyChain } from '../chain/verify-chain.js';
import { AUDIT_UNAVAILABLE_CODE, AuditUnavailableError, AuditWriter } from './audit-writer.js';
import { InlineCommitter, type Committer } from './committer.js';

const newDatabase = tempDatabasePerTest();

async function setup() {
  const t = await newDatabase();
  const count = () => (t.db.prepare('SELECT COUNT(*) AS n FROM audit_record').get() as { n: number }).n;
  return { ...t, count };
}

const nextTurn = () => new Promise((r) => setImmediate(r));
/** The writer's own retries come after 100, 200, 400 ms...: a loaded machine may take far longer. */
const RECOVERY_WAIT = { timeout: 10_000 };
/** Fakes the timers a relaxed window is kept with, so that a test decides when it ends. */
const fakeTimers = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });

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

  it('holds a batch for the rows of recorded requests still running, while they keep arriving', async () => {
    const { db } = await setup();
    const writer = writerFor(db);
    writer.expectRow();
    writer.expectRow();
    const arrive = () => {
      writer.expectedRowDone();
      return writer.append(entry());
    };
    const first = arrive();
    writer.expectRow(); // a third request starts in the same turn
    await nextTurn();
    const second = arrive();
    await nextTurn();
    const third = arrive();
    await Promise.all([first, second, third]);
    expect(writer.status()).toMatchObject({ commits: 1, committedRows: 3 });
  });

  it('counts the event-loop time its commits take, and the longest one', async () => {
    const { db } = await setup();
    const inner = new InlineCommitter(db);
    // A commit that holds the thread a known minimum time, as a slow disk or a checkpoint would.
    const holdMs = [3, 8];
    let calls = 0;
    const slow: Committer = {
      commit(entries) {
        const until = performance.now() + holdMs[calls++];
        while (performance.now() < until);
        return inner.commit(entries);
      },
      close: () => inner.close(),
    };
    const writer = new AuditWriter(slow, { mode: 'strict', flushMs: 20, maxQueuedRows: 100, logger: silentLogger() });
    expect(writer.status()).toMatchObject({ commitMs: 0, longestCommitMs: 0 });
    await writer.append(entry());
    await writer.append(entry());
    const { commitMs, longestCommitMs, commits } = writer.status();
    expect(commits).toBe(2);
    expect(longestCommitMs).toBeGreaterThanOrEqual(8);
    expect(longestCommitMs).toBeLessThan(commitMs);
    expect(commitMs).toBeGreaterThanOrEqual(11);
  });

  it('commits at once when no row is expected: a lone caller does not wait', async () => {
    const { db } = await setup();
    const writer = writerFor(db);
    writer.expectRow();
    writer.expectedRowDone();
    let committed = false;
    const written = writer.append(entry()).then(() => (committed = true));
    await nextTurn();
    await Promise.resolve();
    expect(committed).toBe(true);
    await written;
  });

  it('stops waiting after a turn in which nothing happened, though a row is still expected', async () => {
    const { db } = await setup();
    const writer = writerFor(db);
    writer.expectRow(); // a slow call, still upstream
    writer.expectRow();
    writer.expectedRowDone();
    await writer.append(entry());
    expect(writer.status()).toMatchObject({ commits: 1, committedRows: 1 });
  });

  it('waits at most eight turns while requests keep starting', async () => {
    const { db } = await setup();
    const writer = writerFor(db);
    writer.expectRow();
    writer.expectedRowDone();
    writer.expectRow(); // never arrives in this test
    let turns = 0;
    let committedAt: number | undefined;
    const written = writer.append(entry()).then(() => (committedAt = turns));
    while (turns < 20) {
      writer.expectRow(); // a new request every turn: never a quiet one
      turns += 1;
      await nextTurn();
    }
    await written;
    expect(committedAt).toBeGreaterThan(1);
    expect(committedAt).toBeLessThanOrEqual(9);
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
    // Nothing but the writer's retry commits the row.
    await vi.waitFor(() => expect(count()).toBe(1), RECOVERY_WAIT);
    expect(writer.writable).toBe(true);
    // The host was not given its answer, and the row says so.
    const row = db.prepare('SELECT outcome, error_code AS code, error_message AS message FROM audit_record').get() as Record<string, unknown>;
    expect(row).toMatchObject({ outcome: 'error', code: AUDIT_UNAVAILABLE_CODE });
    expect(row.message).toMatch(/withheld.*upstream outcome: ok/);
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 1 });
  });

  it('refuses while a trigger drops rows as they are inserted, instead of answering with the row missing', async () => {
    const { db, dataSource, file, count } = await setup();
    const writer = writerFor(db);
    await writer.append(entry({ principal: 'alice' }));
    const other = new Database(file);
    other.exec(`CREATE TRIGGER hide_mallory BEFORE INSERT ON audit_entry WHEN NEW.principal = 'mallory' BEGIN SELECT RAISE(IGNORE); END`);
    const hidden = writer.append(entry({ principal: 'mallory' }));
    await expect(hidden).rejects.toBeInstanceOf(AuditUnavailableError);
    expect(writer.writable).toBe(false);
    expect(writer.status().failure).toMatch(/did not store 1 of 1 rows .*trigger/);
    expect(count()).toBe(1);

    other.exec('DROP TRIGGER hide_mallory');
    other.close();
    // Nothing but the writer's retry commits the row.
    await vi.waitFor(() => expect(count()).toBe(2), RECOVERY_WAIT);
    expect(writer.writable).toBe(true);
    expect(db.prepare('SELECT principal FROM audit_record ORDER BY id').all()).toEqual([{ principal: 'alice' }, { principal: 'mallory' }]);
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 2 });
    await writer.close();
  });

  it('a full disk fails loudly and loses nothing once space is back', async () => {
    const { db, count } = await setup();
    const writer = writerFor(db, 'relaxed');
    // SQLite's own "database or disk is full": cap the file at its current size.
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);
    for (let i = 0; i < 50; i++) void writer.append(entry({ arguments: JSON.stringify({ pad: 'x'.repeat(2000) }) }));
    await writer.flush();
    expect(writer.writable).toBe(false);
    expect(writer.status()).toMatchObject({ queuedRows: 50 });
    expect(writer.status().failure).toMatch(/SQLITE_FULL/);
    db.pragma('max_page_count = 1073741823');
    await writer.flush();
    expect(writer.writable).toBe(true);
    expect(count()).toBe(50);
  });
});

describe('AuditWriter, relaxed', () => {
  it('answers at once and commits within flushMs', async () => {
    const { db, count } = await setup();
    fakeTimers();
    try {
      const writer = writerFor(db, 'relaxed'); // flushMs 20
      await writer.append(entry());
      expect(count()).toBe(0);
      vi.advanceTimersByTime(20);
      expect(count()).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps serving while the log cannot be written, and records how many rows it had to drop', async () => {
    const { db, file, count, dataSource } = await setup();
    const writer = writerFor(db, 'relaxed', 1000);
    const other = new Database(file);
    other.prepare('BEGIN IMMEDIATE').run();
    for (let i = 0; i < 1005; i++) await writer.append(entry());
    await writer.flush();
    expect(writer.status()).toMatchObject({ writable: false, queuedRows: 1000, lostRows: 5 });
    other.prepare('COMMIT').run();
    other.close();
    await writer.flush();
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
    await writer.close();
    expect(count()).toBe(10);
    expect(() => writer.append(entry())).toThrow(/closed/);
  });
});

describe('AuditWriter, two writers on one file', () => {
  it('extend one chain (the head is read under the write lock)', async () => {
    const a = await setup();
    const second = await tempDatabaseOn(a.file);
    try {
      const wa = writerFor(a.db);
      const wb = writerFor(second.db);
      for (let i = 0; i < 5; i++) {
        await wa.append(entry());
        await wb.append(entry());
        await nextTurn();
      }
      expect(a.count()).toBe(10);
      expect(await verifyChain(a.dataSource)).toMatchObject({ ok: true, rows: 10 });
    } finally {
      await second.dataSource.destroy();
    }
  });
});

async function tempDatabaseOn(file: string) {
  const { openDatabase, sqliteConnection } = await import('@switchboard/persistence');
  const { AUDIT_ENTITIES } = await import('../audit-record.entity.js');
  const dataSource = await openDatabase({ file, entities: AUDIT_ENTITIES, migrations: [] });
  return { dataSource, db: sqliteConnection(dataSource) };
}

describe('AuditWriter, one commit in flight', () => {
  /** A committer the test completes by hand, to see what the writer does meanwhile. */
  function heldCommitter() {
    const batches: number[] = [];
    const release: (() => void)[] = [];
    return {
      batches,
      release: () => release.shift()?.(),
      commit: (entries: readonly unknown[]) =>
        new Promise<{ id: number; hash: string }>((resolve) => {
          batches.push(entries.length);
          release.push(() => resolve({ id: batches.length, hash: 'h' }));
        }),
      close: async () => undefined,
    };
  }

  it('strict: rows arriving during a commit form the next batch', async () => {
    const committer = heldCommitter();
    const { AuditWriter } = await import('./audit-writer.js');
    const { silentLogger } = await import('@switchboard/observability');
    const writer = new AuditWriter(committer, { mode: 'strict', flushMs: 20, maxQueuedRows: 100, logger: silentLogger() });
    const first = writer.append(entry());
    await nextTurn();
    expect(committer.batches).toEqual([1]);
    const later = [writer.append(entry()), writer.append(entry()), writer.append(entry())];
    await nextTurn();
    expect(committer.batches).toEqual([1]); // still one in flight
    committer.release();
    await first;
    await nextTurn();
    expect(committer.batches).toEqual([1, 3]);
    committer.release();
    await Promise.all(later);
  });

  it('relaxed: a flush window that ends during a commit is not forgotten', async () => {
    const committer = heldCommitter();
    const { AuditWriter } = await import('./audit-writer.js');
    const { silentLogger } = await import('@switchboard/observability');
    fakeTimers();
    try {
      const writer = new AuditWriter(committer, { mode: 'relaxed', flushMs: 10, maxQueuedRows: 100, logger: silentLogger() });
      void writer.append(entry());
      vi.advanceTimersByTime(10);
      expect(committer.batches).toEqual([1]);
      void writer.append(entry());
      vi.advanceTimersByTime(10); // its window ends while the first commit is held
      expect(committer.batches).toEqual([1]);
      committer.release();
      // Nothing but the end of the first commit can start the second: no window is left to end.
      await vi.waitFor(() => expect(committer.batches).toEqual([1, 1]));
      committer.release();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('AuditWriter, rows appended from setImmediate callbacks', () => {
  it('still commits (the pending commit is not pushed back by each append)', async () => {
    const { db, count } = await setup();
    const writer = writerFor(db, 'relaxed');
    let appended = 0;
    await new Promise<void>((done) => {
      const more = () => {
        for (let i = 0; i < 600; i++) void writer.append(entry());
        appended += 600;
        if (appended < 6000) setImmediate(more);
        else done();
      };
      setImmediate(more);
    });
    // 600 rows per turn exceed the eager batch: commits happened while rows kept coming.
    expect(count()).toBeGreaterThan(0);
    await writer.flush();
    expect(count()).toBe(6000);
  });
});

describe('AuditWriter, strict with a full queue', () => {
  it('refuses rows beyond the cap; a refusal nobody awaits is not an unhandled rejection', async () => {
    const { db, file } = await setup();
    const writer = writerFor(db, 'strict', 2);
    const locker = new Database(file);
    locker.prepare('BEGIN IMMEDIATE').run();
    const held = [writer.append(entry()), writer.append(entry())];
    await Promise.allSettled(held);
    // As the relay does for a refusal row: appended, never awaited.
    void writer.append(entry());
    await expect(writer.append(entry())).rejects.toBeInstanceOf(AuditUnavailableError);
    expect(writer.status().lostRows).toBe(2);
    await nextTurn();
    locker.prepare('ROLLBACK').run();
    locker.close();
  });
});
