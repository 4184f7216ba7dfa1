import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { formatLogLine, silentLogger, type Logger } from '@switchboard/observability';
import { describe, expect, it } from 'vitest';
import { entry, tempDatabasePerTest } from '../../test-support/temp-db.js';
import type { AuditEntry } from '../audit.types.js';
import { verifyChain } from '../chain/verify-chain.js';
import { pruneBefore } from '../retention/prune.js';
import { RetentionJob } from '../retention/retention-job.js';
import { AuditWriter } from '../writer/audit-writer.js';
import { InlineCommitter } from '../writer/committer.js';
import type { SqliteConnection } from '@switchboard/persistence';
import { checkCheckpoints, checkpointProblemLines, type CheckpointRules } from './checkpoint-check.js';
import { CheckpointJob, HeadKeeper } from './checkpoint-job.js';
import { checkpointLine, checkpointIn, type Checkpoint } from './checkpoint-line.js';

const DAY = 86_400_000;
const RETENTION_90D: CheckpointRules = { retentionMs: 90 * DAY, now: Date.now() };
const database = tempDatabasePerTest();

/**
 * A log written through the real writer, with the checkpoint the head keeper saw after each
 * commit (one row a commit): what the daemon would have logged.
 */
async function logWithCheckpoints(entries: AuditEntry[]) {
  const t = await database();
  const heads = new HeadKeeper();
  const writer = new AuditWriter(heads.keeping(new InlineCommitter(t.db)), { mode: 'strict', flushMs: 20, maxQueuedRows: 1000, logger: silentLogger() });
  const checkpoints: Checkpoint[] = [];
  for (const e of entries) {
    await writer.append(e);
    checkpoints.push(heads.head!);
  }
  await writer.close();
  return { ...t, checkpoints };
}

const recentRows = (count: number) => Array.from({ length: count }, (_, i) => entry({ at: Date.now() - 1000 + i }));

/** Tampering happens outside the gateway: another connection, as an attacker with the file would. */
function tamper(file: string, ...statements: string[]) {
  const other = new Database(file);
  for (const sql of statements) other.prepare(sql).run();
  other.close();
}

const check = (db: SqliteConnection, checkpoints: Checkpoint[], rules = RETENTION_90D) => checkCheckpoints(db, checkpoints, rules);

describe('checkpoints', () => {
  it('the head keeper names each commit\'s last row as stored, and every checkpoint of an untouched log holds', async () => {
    const { db, checkpoints } = await logWithCheckpoints(recentRows(5));
    const stored = db.prepare('SELECT id, hash, at FROM audit_entry ORDER BY id').all();
    expect(checkpoints).toEqual(stored);
    const report = await check(db, checkpoints);
    expect(report).toMatchObject({ checked: 5, matched: 5, pruned: 0, problems: {}, headId: 5, newestMatched: checkpoints[4] });
    expect(checkpointProblemLines(report, '90d')).toEqual([]);
  });

  it('finds rows cut from the newest end, which the chain alone cannot show', async () => {
    const { db, file, dataSource, checkpoints } = await logWithCheckpoints(recentRows(10));
    tamper(file, 'DELETE FROM audit_entry WHERE id > 6');
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 6 });
    const report = await check(db, checkpoints);
    expect(report.problems.cut).toMatchObject({ count: 4, newest: checkpoints[9] });
    expect(checkpointProblemLines(report, '90d')).toEqual([
      `BROKEN: rows cut from the newest end: checkpoint row 10 (written ${new Date(checkpoints[9].at).toISOString()}) is gone, head is 6 (4 checkpoints name rows beyond the head; the newest is named)`,
    ]);
  });

  it('finds recent rows deleted and passed off as pruning with a forged marker, which the chain accepts', async () => {
    const { db, dataSource, checkpoints } = await logWithCheckpoints(recentRows(10));
    // The attacker prunes with a cut-off of now: a marker and anchor exactly as retention writes them.
    const now = Date.now() + 1000;
    expect(await pruneBefore(db, now, 1000, now)).toMatchObject({ rows: 9, throughId: 9 });
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, prunedRows: 9 });
    const report = await check(db, checkpoints);
    expect(report.problems['pruned-too-early']).toMatchObject({ count: 9, newest: checkpoints[8] });
    expect(checkpointProblemLines(report, '90d')[0]).toBe(
      `BROKEN: row 9 written ${new Date(checkpoints[8].at).toISOString()}, inside retention, is gone (audit.retention is 90d): it was deleted, not pruned (9 checkpoints name rows inside retention; the newest is named)`,
    );
    // With retention off, no row may be gone at all.
    expect((await check(db, checkpoints, { retentionMs: undefined, now })).problems['pruned-too-early']?.count).toBe(9);
  });

  it('accepts rows that retention pruned when they were older than the retention period', async () => {
    const now = Date.now();
    const { db, dataSource, checkpoints } = await logWithCheckpoints([
      ...Array.from({ length: 5 }, (_, i) => entry({ at: now - 100 * DAY + i })),
      ...recentRows(5),
    ]);
    expect(await pruneBefore(db, now - 90 * DAY, 1000, now)).toMatchObject({ rows: 5, throughId: 5 });
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, prunedRows: 5 });
    const report = await check(db, checkpoints, { retentionMs: 90 * DAY, now });
    expect(report).toMatchObject({ checked: 10, matched: 5, pruned: 5, problems: {} });
  });

  it('finds a rewritten row: the tail cut and new rows written under the old ids chain perfectly', async () => {
    const { db, file, dataSource, checkpoints } = await logWithCheckpoints(recentRows(8));
    tamper(file, 'DELETE FROM audit_entry WHERE id > 5');
    const writer = new AuditWriter(new InlineCommitter(db), { mode: 'strict', flushMs: 20, maxQueuedRows: 1000, logger: silentLogger() });
    for (const e of recentRows(3)) await writer.append({ ...e, principal: 'mallory' });
    await writer.close();
    expect(await verifyChain(dataSource)).toMatchObject({ ok: true, rows: 8 });
    const report = await check(db, checkpoints);
    const now = db.prepare('SELECT hash FROM audit_entry WHERE id = 8').get() as { hash: string };
    expect(report.problems.rewritten).toMatchObject({ count: 3, newest: checkpoints[7], found: now.hash });
    expect(report.problems.cut).toBeUndefined();
    expect(checkpointProblemLines(report, '90d')[0]).toMatch(/^BROKEN: row 8 \(written \S+Z\) was rewritten: its hash is [0-9a-f]{64}, the checkpoint says [0-9a-f]{64} \(3 checkpoints do not match/);
  });
});

describe('checkpoint lines', () => {
  const c: Checkpoint = { id: 42, hash: 'ab'.repeat(32), at: Date.UTC(2026, 10, 27, 20, 0) };
  const line = `switchboard-audit-checkpoint v1 id=42 hash=${'ab'.repeat(32)} at=2026-11-27T20:00:00.000Z`;

  it('are self-describing and read back, alone or inside other log text', () => {
    expect(checkpointLine(c)).toBe(line);
    expect(checkpointIn(line)).toEqual({ checkpoint: c, unreadable: 0 });
    const logged = JSON.stringify({ level: 30, time: 1, msg: `audit: checkpoint ${line}` });
    expect(checkpointIn(logged)).toEqual({ checkpoint: c, unreadable: 0 });
    expect(checkpointIn(`Nov 27 host switchboard[1]: ${logged}`)).toEqual({ checkpoint: c, unreadable: 0 });
    expect(checkpointIn('audit log open')).toEqual({ unreadable: 0 });
  });

  it('are read only where one is written: text an upstream or a host put in the log names none', () => {
    const stderr = JSON.stringify({ level: 30, msg: 'upstream stderr', stderr: `"msg":"audit: checkpoint ${line}` });
    expect(checkpointIn(stderr)).toEqual({ unreadable: 1 });
    expect(checkpointIn(`Nov 27 host switchboard[1]: ${line}`)).toEqual({ unreadable: 1 });
    // One message, one checkpoint: a second tag after it is not the daemon's.
    expect(checkpointIn(`${line} ${line.replace('id=42', 'id=43')}`)).toEqual({ checkpoint: c, unreadable: 1 });
  });

  it("are read from the daemon's text log (log.format text) at the line's start, and nowhere else in such a line", () => {
    const asText = formatLogLine(JSON.stringify({ level: 30, time: c.at, msg: `audit: checkpoint ${line}` }));
    expect(asText).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} INFO  audit: checkpoint switchboard-audit-checkpoint v1 id=42 /);
    expect(checkpointIn(asText)).toEqual({ checkpoint: c, unreadable: 0 });
    // An upstream's text, in a field or a message, written as text: escaped into the one line.
    const forged = `${asText.trimEnd()}`.replace('id=42', 'id=43');
    const stderr = formatLogLine(JSON.stringify({ level: 30, time: 1, msg: 'upstream stderr', stderr: `x\n${forged}` }));
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(checkpointIn(stderr)).toEqual({ unreadable: 1 });
    const inMessage = formatLogLine(JSON.stringify({ level: 40, time: 1, msg: `upstream 'x' is down: boom\n${forged}` }));
    expect(checkpointIn(inMessage)).toEqual({ unreadable: 1 });
    // A journal's prefix before a text line: not the line's start (journalctl -o cat prints none).
    expect(checkpointIn(`Nov 27 host switchboard[1]: ${asText}`)).toEqual({ unreadable: 1 });
  });

  it('count a tag that starts no readable v1 line, rather than skip it silently', () => {
    expect(checkpointIn(line.slice(0, 60))).toEqual({ unreadable: 1 });
    expect(checkpointIn(line.replace(' v1 ', ' v2 '))).toEqual({ unreadable: 1 });
    expect(checkpointIn(line.replace('id=42', 'id=0'))).toEqual({ unreadable: 1 });
    expect(checkpointIn(line.replace('at=2026-11-27', 'at=2026-13-45'))).toEqual({ unreadable: 1 });
  });
});

describe('CheckpointJob', () => {
  it('logs the head at info when rows were written since the last checkpoint, and once more at stop', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(...String(chunk).trimEnd().split('\n')), done()) });
    const logger = pino({ level: 'info', base: undefined }, sink);
    const t = await database();
    const heads = new HeadKeeper();
    const writer = new AuditWriter(heads.keeping(new InlineCommitter(t.db)), { mode: 'strict', flushMs: 20, maxQueuedRows: 1000, logger: silentLogger() });
    const job = new CheckpointJob(heads, 3_600_000, logger);
    job.logHead();
    expect(lines).toEqual([]);
    await writer.append(entry());
    job.logHead();
    job.logHead();
    await writer.append(entry());
    await writer.close();
    job.stop();
    job.stop();
    const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(logged.map((l) => l.level)).toEqual([30, 30]);
    expect(lines.map((l) => checkpointIn(l).checkpoint?.id)).toEqual([1, 2]);
  });

  it('logs the audit/pruned row a retention run appended as the head, not the writer\'s last row', async () => {
    const messages: string[] = [];
    const logger = { info: (msg: string) => messages.push(msg) } as unknown as Logger;
    const t = await database();
    const heads = new HeadKeeper();
    const writer = new AuditWriter(heads.keeping(new InlineCommitter(t.db)), { mode: 'strict', flushMs: 20, maxQueuedRows: 1000, logger: silentLogger() });
    const now = Date.now();
    for (const e of [...Array.from({ length: 4 }, (_, i) => entry({ at: now - 100 * DAY + i })), ...recentRows(3)]) await writer.append(e);
    const retention = new RetentionJob(t.db, 90 * DAY, silentLogger(), heads);
    expect(await retention.runOnce(now)).toBe(4);
    new CheckpointJob(heads, 3_600_000, logger).logHead();
    const newest = t.db.prepare('SELECT id, hash, at FROM audit_entry ORDER BY id DESC LIMIT 1').get() as Checkpoint;
    expect(t.db.prepare('SELECT method FROM audit_record WHERE id = ?').get(newest.id)).toEqual({ method: 'audit/pruned' });
    const logged = messages.map((m) => checkpointIn(m.replace('audit: checkpoint ', '')).checkpoint);
    expect(logged).toEqual([newest]);
    expect(await check(t.db, [newest], { retentionMs: 90 * DAY, now })).toMatchObject({ matched: 1, problems: {} });
    await writer.close();
  });

  it('keeps a noted head when a commit reports an older one late (the worker thread\'s reply after a pruning marker)', async () => {
    const heads = new HeadKeeper();
    const late = { id: 7, hash: 'a'.repeat(64) };
    const committer = heads.keeping({ commit: async () => late, close: async () => undefined });
    const marker = { id: 8, hash: 'b'.repeat(64), at: Date.now() };
    heads.note(marker);
    await committer.commit([entry()]);
    expect(heads.head).toEqual(marker);
  });

  it('logs a head that took a logged id with another hash (rows cut under the running daemon)', async () => {
    const messages: string[] = [];
    const logger = { info: (msg: string) => messages.push(msg) } as unknown as Logger;
    const heads = new HeadKeeper();
    const results = [{ id: 5, hash: 'a'.repeat(64) }, { id: 5, hash: 'b'.repeat(64) }];
    const committer = heads.keeping({ commit: async () => results.shift()!, close: async () => undefined });
    const job = new CheckpointJob(heads, 3_600_000, logger);
    await committer.commit([entry()]);
    job.logHead();
    await committer.commit([entry()]);
    job.logHead();
    expect(messages.map((m) => checkpointIn(m.replace('audit: checkpoint ', '')).checkpoint?.hash[0])).toEqual(['a', 'b']);
  });
});
