import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger, type Logger } from '@switchboard/observability';
import { entry, tempDatabasePerTest } from '../../test-support/temp-db.js';
import { verifyChain } from '../chain/verify-chain.js';
import { JournalFile } from '../journal/journal-file.js';
import { readJournal } from '../journal/recover-journals.js';
import { AUDIT_UNAVAILABLE_CODE, AUDIT_UNAVAILABLE_RULE, AuditUnavailableError, AuditWriter } from './audit-writer.js';
import { InlineCommitter } from './committer.js';

const newDatabase = tempDatabasePerTest();

async function setup(flushMs = 20, logger: Logger = silentLogger()) {
  const t = await newDatabase();
  const journal = JournalFile.create(mkdtempSync(join(tmpdir(), 'sb-journal-')));
  const writer = new AuditWriter(new InlineCommitter(t.db), { mode: 'strict', flushMs, maxQueuedRows: 1000, logger, journal });
  const count = () => (t.db.prepare('SELECT COUNT(*) AS n FROM audit_record').get() as { n: number }).n;
  return { ...t, journal, writer, count };
}

/** What a full disk makes a journal write throw (a full disk cannot be had on demand here). */
const diskFull = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/** A logger that keeps its error lines. */
function recordingLogger() {
  const errors: { msg: string; retryInMs?: number; err?: string }[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line) as (typeof errors)[number]) });
  return { logger, errors };
}

describe('AuditWriter, strict with a journal', () => {
  it('releases a row once it is in the journal, and commits it within flushMs', async () => {
    const { writer, journal, count, dataSource } = await setup();
    // The flush window's timer, faked: the test ends it rather than sleeping past it.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await Promise.all([writer.append(entry({ requestId: 'a' })), writer.append(entry({ requestId: 'b' }))]);
      expect(count()).toBe(0);
      expect(readJournal(journal.path).rows.map((r) => r.requestId)).toEqual(['a', 'b']);
      expect(writer.status()).toMatchObject({ journalWrites: 1, commits: 0, journal: journal.path });

      vi.advanceTimersByTime(20);
      expect(count()).toBe(2);
    } finally {
      vi.useRealTimers();
    }
    // Everything journaled is in the database: the file starts its next generation (once the commit has settled).
    await vi.waitFor(() => expect(readJournal(journal.path)).toEqual({ generation: 2, rows: [], badLines: 0 }));
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 2 });
  });

  it('rows appended by one piece of work (a callback and its promise jobs) share one write; later work gets its own', async () => {
    const { writer, journal } = await setup(60_000);
    const first = [writer.append(entry({ requestId: 'a' })), writer.append(entry({ requestId: 'b' }))];
    first.push(Promise.resolve().then(() => writer.append(entry({ requestId: 'c' }))));
    await Promise.all(first);
    expect(writer.status().journalWrites).toBe(1);
    // Released only once written: the rows are in the file when the answers may go.
    expect(readJournal(journal.path).rows.map((r) => r.requestId)).toEqual(['a', 'b', 'c']);
    await new Promise<void>((resolve) => setImmediate(() => void writer.append(entry({ requestId: 'd' })).then(resolve)));
    expect(writer.status().journalWrites).toBe(2);
    expect(readJournal(journal.path).rows.map((r) => r.requestId)).toEqual(['a', 'b', 'c', 'd']);
    // Not at the end of the turn: before anything else already waiting for it runs.
    const writesSeenLater = new Promise<number>((resolve) => setImmediate(() => resolve(writer.status().journalWrites)));
    void writer.append(entry({ requestId: 'e' }));
    expect(await writesSeenLater).toBe(3);
    await writer.close();
  });

  it('close() commits what is queued and removes the journal', async () => {
    const { writer, journal, count } = await setup(60_000);
    await writer.append(entry());
    await writer.close();
    expect(count()).toBe(1);
    expect(() => readJournal(journal.path)).toThrow(/ENOENT/);
  });

  it('while the database is locked, answers stay released (the rows are in the journal) and new calls are refused; nothing is lost', async () => {
    const { writer, journal, file, count, db } = await setup();
    const other = new Database(file);
    other.prepare('BEGIN IMMEDIATE').run();
    await writer.append(entry({ requestId: 'journaled' }));
    await writer.flush();
    expect(writer.writable).toBe(false);
    expect(() => writer.assertWritable()).toThrow(AuditUnavailableError);
    expect(readJournal(journal.path).rows).toHaveLength(1);

    other.prepare('COMMIT').run();
    other.close();
    await writer.flush();
    expect(writer.writable).toBe(true);
    expect(count()).toBe(1);
    expect(db.prepare('SELECT outcome, error_code AS code FROM audit_record').get()).toEqual({ outcome: 'ok', code: null });
  });

  it('a journal that cannot be written withholds the answers, and their rows say so', async () => {
    const { writer, journal, count, db } = await setup();
    const write = journal.write.bind(journal);
    // A full disk cannot be had on demand here: the write fails as the file system would.
    journal.write = () => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    await expect(writer.append(entry())).rejects.toBeInstanceOf(AuditUnavailableError);
    expect(writer.status().failure).toMatch(/ENOSPC/);
    journal.write = write;
    await writer.flush();
    expect(count()).toBe(1);
    const row = db.prepare('SELECT outcome, error_code AS code, error_message AS message FROM audit_record').get() as Record<string, unknown>;
    expect(row).toMatchObject({ outcome: 'error', code: AUDIT_UNAVAILABLE_CODE });
    expect(row.message).toMatch(/withheld.*ENOSPC/);
    expect(writer.writable).toBe(true);
    await writer.append(entry());
    expect(readJournal(journal.path).rows).toHaveLength(1);
  });

  it('journal writes failing under load move neither the backoff nor the armed retry: the commit is retried on time, one log line per attempt', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] });
    try {
      const { logger, errors } = recordingLogger();
      const { writer, journal, file, count } = await setup(20, logger);
      const other = new Database(file);
      other.prepare('BEGIN IMMEDIATE').run(); // the database cannot be written either
      const write = journal.write.bind(journal);
      journal.write = () => {
        throw diskFull();
      };
      const answers: Promise<void>[] = [];
      // A call every 10 ms, each journal write failing: the first arms a retry in 100 ms.
      for (let i = 0; i < 10; i++) {
        answers.push(writer.append(entry()));
        await vi.advanceTimersByTimeAsync(10);
      }
      // At 100 ms the commit is tried, fails, and the next try is in 200 ms.
      expect(errors.map((e) => e.msg)).toEqual([
        'audit: cannot write the audit log; refusing calls until it recovers',
        'audit: still cannot write the audit log',
      ]);
      expect(errors[0].err).toBe('ENOSPC: no space left on device, write');
      expect(errors[1]).toMatchObject({ err: expect.stringMatching(/^SQLITE_BUSY/), retryInMs: 200 });

      other.prepare('COMMIT').run();
      other.close();
      journal.write = write;
      await vi.advanceTimersByTimeAsync(200);
      expect(writer.writable).toBe(true);
      expect(count()).toBe(10);
      for (const answer of answers) await expect(answer).rejects.toBeInstanceOf(AuditUnavailableError);
      await writer.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('refusals because the log cannot be written wait in memory, not in the failing journal, and are committed once it recovers', async () => {
    const { writer, journal, count, db } = await setup();
    const write = journal.write.bind(journal);
    let writes = 0;
    journal.write = () => {
      writes += 1;
      throw diskFull();
    };
    await expect(writer.append(entry())).rejects.toBeInstanceOf(AuditUnavailableError);
    // The reason as the file system gave it, its code once.
    expect(writer.status().failure).toBe('ENOSPC: no space left on device, write');
    const refusal = () =>
      entry({ decision: 'refused', rule: AUDIT_UNAVAILABLE_RULE, outcome: null, upstream: null, errorCode: AUDIT_UNAVAILABLE_CODE });
    for (let i = 0; i < 100; i++) await writer.append(refusal());
    await new Promise((r) => setImmediate(r));
    expect(writes).toBe(1);
    expect(writer.status().queuedRows).toBe(101);

    journal.write = write;
    await writer.flush();
    expect(writer.writable).toBe(true);
    expect(count()).toBe(101);
    expect((db.prepare("SELECT COUNT(*) AS n FROM audit_record WHERE rule = 'audit:unavailable'").get() as { n: number }).n).toBe(100);
    expect(readJournal(journal.path).rows).toHaveLength(0);
    await writer.close();
  });
});
