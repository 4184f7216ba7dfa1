import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AuditWriter, InlineCommitter, checkpointIn, pruneBefore, type AuditEntry } from '@switchboard/audit';
import { loadConfigWithWarnings, type GatewayConfig } from '@switchboard/config';
import { silentLogger } from '@switchboard/observability';
import { sqliteConnection } from '@switchboard/persistence';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { databasePath, openMigrated } from '../apps/switchboard/src/audit-store.js';
import { entry } from '../libs/audit/test-support/temp-db.js';
import { auditRows, journaledRows } from './support/audit-rows.js';
import { connectHost } from './support/hosts.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig } from './support/daemon.js';
import { runCli } from './support/cli.js';

/**
 * Checkpoints, the chain's outside anchor: `audit checkpoint` and `audit verify --checkpoint`
 * on a real SQLite file written by the real writer, and the daemon logging them.
 */

afterAll(stopAllDaemons);

const DAY = 86_400_000;

const cli = (args: string[]) => runCli(args, { timeoutMs: 60_000 });

/** A database of its own (retention 90d, the default), with `entries` committed by the writer. */
async function logWith(entries: AuditEntry[]) {
  const configPath = writeConfig({ mcpServers: {} });
  const config = loadConfigWithWarnings(configPath).config;
  await withDatabase(config, async (db) => {
    const writer = new AuditWriter(new InlineCommitter(db), { mode: 'strict', flushMs: 10, maxQueuedRows: 1000, logger: silentLogger() });
    for (const e of entries) void writer.append(e);
    await writer.close();
  });
  return { config, configPath, file: databasePath(config) };
}

async function withDatabase<T>(config: GatewayConfig, use: (db: ReturnType<typeof sqliteConnection>) => Promise<T>): Promise<T> {
  const { dataSource } = await openMigrated(config);
  try {
    return await use(sqliteConnection(dataSource));
  } finally {
    await dataSource.destroy();
  }
}

/** One read of the file through a connection of its own, closed after. */
function readOnce<T>(file: string, query: string): T | undefined {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(query).get() as T | undefined;
  } finally {
    db.close();
  }
}

function sql(file: string, ...statements: string[]) {
  const db = new Database(file);
  for (const s of statements) db.prepare(s).run();
  db.close();
}

/** `audit checkpoint` now, as an operator's cron would keep it; one line. */
function takeCheckpoint(configPath: string): string {
  const r = cli(['audit', 'checkpoint', '--config', configPath]);
  expect(r).toMatchObject({ code: 0, stderr: '' });
  expect(r.stdout).toMatch(/^switchboard-audit-checkpoint v1 id=\d+ hash=[0-9a-f]{64} at=\S+Z\n$/);
  return r.stdout;
}

const recent = (count: number) => Array.from({ length: count }, (_, i) => entry({ at: Date.now() - 1000 + i }));

describe('switchboard audit checkpoint and verify --checkpoint', () => {
  it('a checkpoint names the newest row; verify checks a file of them (exit 0), and refuses a file with none', async () => {
    const { configPath, file } = await logWith(recent(3));
    const kept = join(tempDir(), 'checkpoints.txt');
    writeFileSync(kept, takeCheckpoint(configPath));
    const head = readOnce(file, 'SELECT id, hash, at FROM audit_entry WHERE id = 3');
    expect(checkpointIn(takeCheckpoint(configPath)).checkpoint).toEqual(head);
    const ok = cli(['audit', 'verify', '--checkpoint', kept, '--config', configPath]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      /^ok: 3 rows, chain intact .*\ncheckpoints: the chain holds up to the newest checkpoint, row 3 written \S+Z \(1 checkpoint checked: 1 matches the log\)\n$/,
    );

    // No checkpoint yet: the error says where they come from, and the command it names writes one.
    const daemonWrites =
      'Checkpoints come from the daemon: it logs one every audit.checkpointEvery (1h) while calls are recorded, at log.level info, ' +
      "as 'audit: checkpoint switchboard-audit-checkpoint v1 ...' in its log; give that log (or the file your log shipper keeps) to --checkpoint. " +
      `Or write one now: switchboard audit checkpoint --config ${configPath} >> `;
    writeFileSync(kept, 'nothing here\n');
    const none = cli(['audit', 'verify', '--checkpoint', kept, '--config', configPath]);
    expect([none.code, none.stdout.split('\n')[1], none.stderr]).toEqual([1, '', `switchboard: no checkpoint in ${kept} yet. ${daemonWrites}${kept}\n`]);
    const absent = join(tempDir(), 'absent.txt');
    const missing = cli(['audit', 'verify', '--checkpoint', absent, '--config', configPath]);
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([1, '', `switchboard: the checkpoints file ${absent} does not exist. ${daemonWrites}${absent}\n`]);
    const advised = none.stderr.split('Or write one now: ')[1].trim().split(' >> ')[0].split(' ');
    expect(advised.slice(0, 1)).toEqual(['switchboard']);
    writeFileSync(absent, cli(advised.slice(1)).stdout);
    expect(cli(['audit', 'verify', '--checkpoint', absent, '--config', configPath]).code).toBe(0);
    const bare = cli(['audit', 'verify', '--checkpoint']);
    expect([bare.code, bare.stderr]).toEqual([2, 'switchboard: --checkpoint needs a file of checkpoint lines, or a daemon log, e.g. --checkpoint checkpoints.log\n']);
  });

  it('rows cut from the newest end: the chain still verifies, the checkpoint does not (exit 1)', async () => {
    const { configPath, file } = await logWith(recent(6));
    const kept = join(tempDir(), 'checkpoints.txt');
    writeFileSync(kept, takeCheckpoint(configPath));
    sql(file, 'DELETE FROM audit_entry WHERE id > 4');
    expect(cli(['audit', 'verify', '--config', configPath]).code).toBe(0);
    const r = cli(['audit', 'verify', '--checkpoint', kept, '--config', configPath]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ok: 4 rows, chain intact .*\nBROKEN: rows cut from the newest end: checkpoint row 6 \(written \S+Z\) is gone, head is 4\n$/);
  });

  it('recent rows deleted behind a forged pruning marker and anchor: refused by the configured retention (exit 1)', async () => {
    const { config, configPath } = await logWith(recent(6));
    const kept = join(tempDir(), 'checkpoints.txt');
    writeFileSync(kept, takeCheckpoint(configPath));
    await withDatabase(config, async (db) => {
      const writer = new AuditWriter(new InlineCommitter(db), { mode: 'strict', flushMs: 10, maxQueuedRows: 10, logger: silentLogger() });
      for (const e of recent(2)) await writer.append(e);
      await writer.close();
      // A marker whose cut-off is its own time: it accounts for every row but the head.
      const now = Date.now() + 1000;
      expect(await pruneBefore(db, now, 1000, now)).toMatchObject({ throughId: 7 });
    });
    expect(cli(['audit', 'verify', '--config', configPath]).code).toBe(0);
    const r = cli(['audit', 'verify', '--checkpoint', kept, '--config', configPath]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/\nBROKEN: row 6 written \S+Z, inside retention, is gone \(audit\.retention is 90d\): it was deleted, not pruned\n$/);
  });

  it('rows pruned by retention after they were checkpointed pass; a rewritten row does not', async () => {
    const now = Date.now();
    const { config, configPath, file } = await logWith(Array.from({ length: 4 }, (_, i) => entry({ at: now - 100 * DAY + i })));
    const kept = join(tempDir(), 'checkpoints.txt');
    const old = takeCheckpoint(configPath);
    await withDatabase(config, async (db) => {
      const writer = new AuditWriter(new InlineCommitter(db), { mode: 'strict', flushMs: 10, maxQueuedRows: 10, logger: silentLogger() });
      for (const e of recent(3)) await writer.append(e);
      await writer.close();
      expect(await pruneBefore(db, now - 90 * DAY, 1000, now)).toMatchObject({ rows: 4, throughId: 4 });
    });
    writeFileSync(kept, old + takeCheckpoint(configPath));
    const ok = cli(['audit', 'verify', '--checkpoint', kept, '--config', configPath]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      /\ncheckpoints: the chain holds up to the newest checkpoint, row 8 written \S+Z \(2 checkpoints checked: 1 matches the log, 1 names a row pruned by retention, older than audit\.retention\)\n$/,
    );

    sql(file, `UPDATE audit_entry SET hash = '${'0'.repeat(64)}' WHERE id = 8`);
    const r = cli(['audit', 'verify', '--checkpoint', kept, '--config', configPath]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^BROKEN at row 8: .*\nBROKEN: row 8 \(written \S+Z\) was rewritten: its hash is 0{64}, the checkpoint says [0-9a-f]{64}\n$/);
  });
});

describe('the daemon logs checkpoints (audit.checkpointEvery)', () => {
  /** A daemon with this checkpointEvery, after one call through it; its database file. */
  async function daemonAfterACall(checkpointEvery: string, format: 'auto' | 'text' = 'auto') {
    const dir = tempDir();
    const configPath = writeConfig({ mcpServers: { fx: stdioFixture() }, log: { level: 'info', format }, audit: { checkpointEvery } }, dir);
    const daemon = await startDaemon(configPath);
    const host = await connectHost('streamable-http', { daemon });
    await host.client.callTool({ name: 'fx__echo', arguments: { text: 'checkpointed' } });
    const file = databasePath(loadConfigWithWarnings(configPath).config);
    const callRow = await eventually(() => readOnce<{ id: number }>(file, `SELECT id FROM audit_record WHERE name = 'fx__echo'`)?.id, 30_000, 'the call row');
    const logged = () => daemon.stderr().split('\n').flatMap((line) => checkpointIn(line).checkpoint ?? []);
    return { dir, configPath, daemon, host, file, callRow, logged };
  }

  it('logs the head at info while rows are written; its log, given to verify as is, holds', async () => {
    const { dir, configPath, daemon, host, callRow, logged } = await daemonAfterACall('1s');
    await eventually(() => logged().some((c) => c.id >= callRow), 30_000, 'a checkpoint naming the call row');
    const line = daemon.stderr().split('\n').find((l) => checkpointIn(l).checkpoint)!;
    expect(JSON.parse(line)).toMatchObject({ level: 30, msg: expect.stringMatching(/^audit: checkpoint switchboard-audit-checkpoint v1 id=\d+ /) });
    await host.close();
    expect((await daemon.stop('SIGTERM')).code).toBe(0);
    const log = join(dir, 'daemon.log');
    writeFileSync(log, daemon.stderr());
    const r = cli(['audit', 'verify', '--checkpoint', log, '--config', configPath]);
    const count = logged().length;
    expect(r.stdout).toMatch(new RegExp(`\\ncheckpoints: the chain holds up to the newest checkpoint, row \\d+ written \\S+Z \\(${count} checkpoints? checked: ${count} match(es)? the log\\)\\n$`));
    expect(r.code).toBe(0);
  });

  it('log.format text: the log is one readable line per entry, and verify reads the checkpoints in it', async () => {
    const { dir, configPath, daemon, host, callRow, logged } = await daemonAfterACall('1s', 'text');
    await eventually(() => logged().some((c) => c.id >= callRow), 30_000, 'a checkpoint naming the call row');
    const lines = daemon.stderr().split('\n').filter(Boolean);
    const entry = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) /;
    // Every line is an entry, or the indented stack of an error's entry.
    expect(lines.filter((line) => !entry.test(line) && !line.startsWith('    '))).toEqual([]);
    expect(lines.find((line) => checkpointIn(line).checkpoint)).toMatch(/ INFO  audit: checkpoint switchboard-audit-checkpoint v1 id=\d+ /);
    await host.close();
    expect((await daemon.stop('SIGTERM')).code).toBe(0);
    const log = join(dir, 'daemon.log');
    writeFileSync(log, daemon.stderr());
    const r = cli(['audit', 'verify', '--checkpoint', log, '--config', configPath]);
    expect(r.stdout).toMatch(/\ncheckpoints: the chain holds up to the newest checkpoint, row \d+ written \S+Z \(\d+ checkpoints? checked: \d+ match(es)? the log\)\n$/);
    expect(r.code).toBe(0);
  });

  it('logs one at shutdown, after the final flush, naming the last row written', async () => {
    // An hour: no periodic checkpoint comes during the test, so the last one is the shutdown's.
    const { daemon, host, file, logged } = await daemonAfterACall('1h');
    await host.close();
    expect((await daemon.stop('SIGTERM')).code).toBe(0);
    expect(logged()).toEqual([readOnce(file, 'SELECT id, hash, at FROM audit_entry ORDER BY id DESC LIMIT 1')]);
  });

  it('names the rows a start moved in from a crashed run\'s journal, with no call after the restart', async () => {
    const dir = tempDir();
    // flushMs far beyond the test: at the kill, the calls' rows are in the journal only.
    const configPath = writeConfig(
      { mcpServers: { fx: stdioFixture() }, log: { level: 'info' }, audit: { flushMs: 60_000, checkpointEvery: '1s' } },
      dir,
    );
    const crashed = await startDaemon(configPath);
    const host = await connectHost('streamable-http', { daemon: crashed });
    for (let i = 0; i < 5; i++) await host.client.callTool({ name: 'fx__echo', arguments: { text: `journaled ${i}` } });
    // The 5 calls', and the policy/loaded row of the start.
    expect(journaledRows(join(dir, 'data'))).toBe(6);
    crashed.proc.kill('SIGKILL');
    await host.close().catch(() => undefined);
    await crashed.stop(); // already killed: waits for the exit

    const again = await startDaemon(configPath);
    await again.waitForLog(/moved rows into the log from the journal/);
    const file = databasePath(loadConfigWithWarnings(configPath).config);
    const head = readOnce<{ id: number; hash: string; at: number }>(file, 'SELECT id, hash, at FROM audit_entry ORDER BY id DESC LIMIT 1');
    const moved = readOnce<{ n: number }>(file, `SELECT COUNT(*) AS n FROM audit_record WHERE arguments LIKE '%journaled%'`);
    expect(moved?.n).toBe(5);
    const logged = () => again.stderr().split('\n').flatMap((line) => checkpointIn(line).checkpoint ?? []);
    // Idle after the restart: the periodic checkpoint must come anyway, naming the moved rows' head.
    expect(await eventually(() => logged().find((c) => c.id === head?.id), 30_000, 'a checkpoint naming the moved rows')).toEqual(head);
    expect((await again.stop('SIGTERM')).code).toBe(0);
    const log = join(dir, 'daemon.log');
    writeFileSync(log, again.stderr());
    const r = cli(['audit', 'verify', '--checkpoint', log, '--config', configPath]);
    expect(r.code).toBe(0);
    // The newest checkpoint names the moved rows' head, or the restart's own policy/loaded row after it.
    const newest = Number(/the chain holds up to the newest checkpoint, row (\d+) written/.exec(r.stdout)?.[1]);
    expect(newest).toBeGreaterThanOrEqual(head!.id);
    expect(r.stdout).toMatch(/\((\d+) checkpoints? checked: \1 match(es)? the log\)/);
  });

  it('names rows a killed run committed after its last checkpoint, with no call after the restart', async () => {
    const dir = tempDir();
    const config = (checkpointEvery: string) =>
      writeConfig({ mcpServers: { fx: stdioFixture() }, log: { level: 'info' }, audit: { checkpointEvery } }, dir);
    // An hour: the run is killed before its first checkpoint, with its rows committed.
    const killed = await startDaemon(config('1h'));
    const host = await connectHost('streamable-http', { daemon: killed });
    for (let i = 0; i < 3; i++) await host.client.callTool({ name: 'fx__echo', arguments: { text: `committed ${i}` } });
    const rows = auditRows(join(dir, 'data'), `arguments LIKE '%committed%'`);
    expect(rows).toHaveLength(3);
    expect(journaledRows(join(dir, 'data'))).toBe(0);
    killed.proc.kill('SIGKILL');
    await host.close().catch(() => undefined);
    await killed.stop(); // already killed: waits for the exit
    expect(killed.stderr().split('\n').some((line) => checkpointIn(line).checkpoint)).toBe(false);
    const file = databasePath(loadConfigWithWarnings(config('1s')).config);
    const head = readOnce<{ id: number; hash: string; at: number }>(file, 'SELECT id, hash, at FROM audit_entry ORDER BY id DESC LIMIT 1');
    expect(head?.id).toBe(rows[2].id);

    // Nothing in the journal to move, and idle but for the start's own policy/loaded row: the
    // periodic checkpoint must cover that head, naming it or the row after it.
    const again = await startDaemon(config('1s'));
    const logged = () => again.stderr().split('\n').flatMap((line) => checkpointIn(line).checkpoint ?? []);
    const named = await eventually(() => logged().find((c) => c.id >= head!.id), 30_000, 'a checkpoint covering the killed run\'s head');
    const row = readOnce<{ id: number; hash: string; at: number }>(file, `SELECT id, hash, at FROM audit_entry WHERE id = ${named.id}`);
    expect(named).toEqual(row);
    expect(named.id - head!.id).toBeLessThanOrEqual(1);
    expect((await again.stop('SIGTERM')).code).toBe(0);
  });

  it('logs none with checkpointEvery: off', async () => {
    const { dir, configPath, daemon, host } = await daemonAfterACall('off');
    await host.close();
    expect((await daemon.stop('SIGTERM')).code).toBe(0);
    expect(daemon.stderr()).toMatch(/audit log open/);
    expect(daemon.stderr()).not.toMatch(/switchboard-audit-checkpoint/);
    // verify then says why its log has none, and how to write one.
    const log = join(dir, 'daemon.log');
    writeFileSync(log, daemon.stderr());
    const r = cli(['audit', 'verify', '--checkpoint', log, '--config', configPath]);
    expect([r.code, r.stderr]).toEqual([
      1,
      `switchboard: no checkpoint in ${log} yet. audit.checkpointEvery is off in this config, so the daemon logs none. ` +
        `Write one with: switchboard audit checkpoint --config ${configPath} >> ${log}\n`,
    ]);
  });
});
