import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@switchboard/observability';
import { entry, tempDatabasePerTest } from '../../test-support/temp-db.js';
import { recordText } from '../chain/row-hash.js';
import { verifyChain } from '../chain/verify-chain.js';
import { RowInserter } from '../writer/row-insert.js';
import { JournalFile, LOCK_SUFFIX } from './journal-file.js';
import { journalRowsNotIn, recoverJournals, strandedJournals } from './recover-journals.js';

const newDatabase = tempDatabasePerTest();

async function setup() {
  const t = await newDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'sb-journals-'));
  const requestIds = () => (t.db.prepare('SELECT request_id FROM audit_record ORDER BY id').all() as { request_id: string }[]).map((r) => r.request_id);
  const marks = () => t.db.prepare('SELECT journal FROM audit_journal_mark').all();
  return { ...t, dir, requestIds, marks };
}

/** A journal left behind as by a process that died: its rows written, its lock gone with it. */
function leftBehind(dir: string, ids: string[]): { journal: JournalFile; entries: ReturnType<typeof entry>[] } {
  const journal = JournalFile.create(dir);
  const entries = ids.map((requestId) => entry({ requestId }));
  journal.write(entries.map((e) => recordText(0, e)));
  journal.close(false);
  return { journal, entries };
}

describe('recoverJournals', () => {
  it("moves the rows of a dead process's journal into the chain, then removes the journal and its mark", async () => {
    const { db, dataSource, dir, requestIds, marks } = await setup();
    new RowInserter(db).append([entry({ requestId: 'earlier' })]);
    leftBehind(dir, ['a', 'b', 'c']);
    expect(recoverJournals(db, dir, silentLogger())).toBe(3);
    expect(requestIds()).toEqual(['earlier', 'a', 'b', 'c']);
    expect(readdirSync(dir)).toEqual([]);
    expect(marks()).toEqual([]);
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 4 });
  });

  it('skips the rows its last commit already moved: a kill between the commit and emptying the file duplicates nothing', async () => {
    const { db, dir, requestIds } = await setup();
    const { journal, entries } = leftBehind(dir, ['a', 'b', 'c', 'd']);
    // The process committed its first three rows, with their mark, and died before emptying the file.
    new RowInserter(db).append(entries.slice(0, 3), { journal: journal.name, generation: 1, movedRows: 3 });
    expect(recoverJournals(db, dir, silentLogger())).toBe(1);
    expect(requestIds()).toEqual(['a', 'b', 'c', 'd']);
    // Run again (two processes starting at once): nothing more.
    expect(recoverJournals(db, dir, silentLogger())).toBe(0);
    expect(requestIds()).toHaveLength(4);
  });

  it('leaves alone the journal of a process that is still running', async () => {
    const { db, dir, requestIds } = await setup();
    const live = JournalFile.create(dir);
    live.write([recordText(0, entry({ requestId: 'live' }))]);
    expect(recoverJournals(db, dir, silentLogger())).toBe(0);
    expect(requestIds()).toEqual([]);
    expect(existsSync(live.path)).toBe(true);
    live.close(false);
    expect(recoverJournals(db, dir, silentLogger())).toBe(1);
  });

  it('keeps a journal whose rows cannot be moved now (a locked database) for the next start', async () => {
    const { db, file, dir, requestIds } = await setup();
    const { journal } = leftBehind(dir, ['a']);
    const Database = (await import('better-sqlite3')).default;
    const other = new Database(file);
    other.prepare('BEGIN IMMEDIATE').run();
    expect(recoverJournals(db, dir, silentLogger())).toBe(0);
    expect(existsSync(journal.path)).toBe(true);
    other.prepare('COMMIT').run();
    other.close();
    expect(recoverJournals(db, dir, silentLogger())).toBe(1);
    expect(requestIds()).toEqual(['a']);
  });

  it('strandedJournals counts, without moving or creating anything, the rows only a dead journal holds', async () => {
    const { db, dir } = await setup();
    const { journal, entries } = leftBehind(dir, ['a', 'b', 'c', 'd']);
    new RowInserter(db).append(entries.slice(0, 3), { journal: journal.name, generation: 1, movedRows: 3 });
    const live = JournalFile.create(dir);
    live.write([recordText(0, entry())]);
    expect(strandedJournals(db, dir)).toEqual({ rows: 1, unknownOwner: [] });
    expect(readdirSync(dir).sort()).toEqual(
      [`${journal.name}.journal`, `${journal.name}.lock`, `${live.name}.journal`, `${live.name}.lock`].sort(),
    );
    live.close(true);
  });

  it('journalRowsNotIn counts the rows of every journal the database lacks, a running process\'s too, for a backup to say', async () => {
    const { db, dir } = await setup();
    const { journal, entries } = leftBehind(dir, ['a', 'b', 'c', 'd']);
    new RowInserter(db).append(entries.slice(0, 3), { journal: journal.name, generation: 1, movedRows: 3 });
    const live = JournalFile.create(dir);
    live.write([recordText(0, entry()), recordText(0, entry())]);
    expect(journalRowsNotIn(db, dir)).toBe(3);
    expect(journalRowsNotIn(db, join(dir, 'none'))).toBe(0);
    live.close(true);
  });

  it('leaves alone a running journal whose lock file was removed (nothing moved twice), says why, and moves it once the lock file is back', async () => {
    const { db, dir, requestIds } = await setup();
    const live = JournalFile.create(dir);
    live.write([recordText(0, entry({ requestId: 'live' }))]);
    const lock = join(dir, live.name + LOCK_SUFFIX);
    rmSync(lock); // an operator clearing "stale" locks
    const warnings: { msg: string; pid?: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as (typeof warnings)[number]) });

    expect(recoverJournals(db, dir, logger)).toBe(0);
    expect(requestIds()).toEqual([]);
    expect(existsSync(live.path)).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ pid: String(process.pid) });
    expect(warnings[0].msg).toContain(`has no lock file, so whether its process (pid ${process.pid}) still runs cannot be told`);
    expect(warnings[0].msg).toContain(`touch ${lock}`);
    expect(strandedJournals(db, dir)).toEqual({ rows: 0, unknownOwner: [{ journal: live.path, lock, pid: String(process.pid) }] });
    expect(readdirSync(dir)).toEqual([`${live.name}.journal`]); // a reader creates nothing

    // The process stops; the operator, told so, puts the lock file back.
    live.close(false);
    writeFileSync(lock, '');
    expect(recoverJournals(db, dir, silentLogger())).toBe(1);
    expect(requestIds()).toEqual(['live']);
    expect(readdirSync(dir)).toEqual([]);
  });
});
