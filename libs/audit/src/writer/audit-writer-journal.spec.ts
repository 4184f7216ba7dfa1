import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@switchboard/observability';
import { entry, tempDatabasePerTest } from '../../test-support/temp-db.js';
import { verifyChain } from '../chain/verify-chain.js';
import { JournalFile } from '../journal/journal-file.js';
import { readJournal } from '../journal/recover-journals.js';
import { AUDIT_UNAVAILABLE_CODE, AuditUnavailableError, AuditWriter } from './audit-writer.js';
import { InlineCommitter } from './committer.js';

const newDatabase = tempDatabasePerTest();

async function setup(flushMs = 20) {
  const t = await newDatabase();
  const journal = JournalFile.create(mkdtempSync(join(tmpdir(), 'sb-journal-')));
  const writer = new AuditWriter(new InlineCommitter(t.db), { mode: 'strict', flushMs, maxQueuedRows: 1000, logger: silentLogger(), journal });
  const count = () => (t.db.prepare('SELECT COUNT(*) AS n FROM audit_record').get() as { n: number }).n;
  return { ...t, journal, writer, count };
}

describe('AuditWriter, strict with a journal', () => {
  it('releases a row once it is in the journal, and commits it within flushMs', async () => {
    const { writer, journal, count, dataSource } = await setup();
    await Promise.all([writer.append(entry({ requestId: 'a' })), writer.append(entry({ requestId: 'b' }))]);
    expect(count()).toBe(0);
    expect(readJournal(journal.path).rows.map((r) => r.requestId)).toEqual(['a', 'b']);
    expect(writer.status()).toMatchObject({ journalWrites: 1, commits: 0, journal: journal.path });

    await new Promise((r) => setTimeout(r, 60));
    expect(count()).toBe(2);
    // Everything journaled is in the database: the file starts its next generation.
    expect(readJournal(journal.path)).toEqual({ generation: 2, rows: [], badLines: 0 });
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
});
