import { spawn } from 'node:child_process';
import { pruneBefore, type AuditEntry, type AuditRow } from '@switchboard/audit';
import { loadConfigWithWarnings } from '@switchboard/config';
import { sqliteConnection } from '@switchboard/persistence';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { databasePath, openMigrated } from '../apps/switchboard/src/audit-store.js';
import { appendRows, entry, ENTRIES, MINUTE, NOW } from './support/audit-samples.js';
import { SWITCHBOARD_BIN, writeConfig } from './support/daemon.js';
import { runCli } from './support/cli.js';

/**
 * `switchboard audit verify` against a real SQLite file whose rows the real AuditWriter
 * committed: with rows pruned by retention (and deleted under a forged anchor), and with a
 * rewritten view or an added trigger that would change what the readers show. The readers'
 * snapshot under pruning is here too, as it needs the same pruned logs.
 */

describe('switchboard audit verify and retention pruning', () => {
  /** A database of its own with `entries` committed; returns the config and the file. */
  async function logWith(entries: AuditEntry[]) {
    const configPath = writeConfig({ mcpServers: {} });
    const config = loadConfigWithWarnings(configPath).config;
    await appendRows(config, entries);
    return { config, configPath, file: databasePath(config) };
  }

  function sql(file: string, ...statements: string[]) {
    const db = new Database(file);
    for (const s of statements) db.prepare(s).run();
    db.close();
  }

  it('accepts rows pruned by retention (a minute, twice), naming the audit/pruned row that accounts for them', async () => {
    // Not the file's NOW: on a loaded machine the tests before this one can take over a minute.
    const now = Date.now();
    const { config, configPath, file } = await logWith(
      Array.from({ length: 12 }, (_, i) => entry({ at: now - (i < 10 ? 5 : 0) * MINUTE + i })),
    );
    const prune = async (now: number) => {
      const { dataSource } = await openMigrated(config);
      try {
        return await pruneBefore(sqliteConnection(dataSource), now - MINUTE, 1000, now);
      } finally {
        await dataSource.destroy();
      }
    };
    expect(await prune(Date.now())).toEqual({ rows: 10, throughId: 10, markerId: 13 });
    const once = runCli(['audit', 'verify', '--config', configPath]);
    expect(once.code).toBe(0);
    expect(once.stdout).toMatch(/^ok: 3 rows, chain intact \(head [0-9a-f]{64}, 10 rows pruned by retention\)\n/);
    expect(once.stdout).toMatch(/\npruned: rows through id 10, accounted for by the audit\/pruned row 13 written \S+Z, cut-off \S+Z\n$/);

    // Two minutes on: rows 11-12 and the first marker go; the second marker accounts for all 12.
    expect(await prune(Date.now() + 2 * MINUTE)).toEqual({ rows: 2, throughId: 12, markerId: 14 });
    const twice = runCli(['audit', 'verify', '--config', configPath]);
    expect(twice.code).toBe(0);
    expect(twice.stdout).toMatch(/^ok: 2 rows, chain intact \(head [0-9a-f]{64}, 12 rows pruned by retention\)\npruned: rows through id 12, accounted for by the audit\/pruned row 14 /);

    // Rows deleted past what the marker pruned, the anchor moved over them: refused.
    sql(
      file,
      'DELETE FROM audit_entry WHERE id <= 13',
      `UPDATE audit_chain SET anchor_id = 13, anchor_hash = (SELECT prev_hash FROM audit_entry WHERE id = 14), pruned_rows = 13`,
    );
    const forged = runCli(['audit', 'verify', '--config', configPath]);
    expect(forged.code).toBe(1);
    expect(forged.stdout).toMatch(/^BROKEN before row 14: rows before id 14 are missing and no pruning marker in the chain accounts for them /);
  });

  /**
   * `count` rows, all but the newest older than the retention cut-off; runs the reader with
   * its stdout held, so it waits part-way through its first page, prunes meanwhile, then
   * reads what it printed (JSON lines).
   */
  async function readWhilePruning(count: number, command: string[]): Promise<AuditRow[]> {
    const now = Date.now();
    const entries = Array.from({ length: count }, (_, i) => entry({ at: now - 10 * MINUTE + i }));
    // The writer queues at most 1000 rows at a time here.
    const { config, configPath } = await logWith(entries.slice(0, 1000));
    for (let i = 1000; i < count; i += 1000) await appendRows(config, entries.slice(i, i + 1000));
    const proc = spawn(process.execPath, [SWITCHBOARD_BIN, 'audit', ...command, '--config', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    // 'close': after 'exit' the last rows on stdout may still be unread.
    const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)));
    // Not read yet: the reader fills the pipe and waits, part-way through its first page of rows.
    proc.stdout.pause();
    await new Promise((resolve) => proc.stdout.once('readable', resolve));
    const { dataSource } = await openMigrated(config);
    try {
      expect(await pruneBefore(sqliteConnection(dataSource), now - 5 * MINUTE)).toMatchObject({ rows: count - 1 });
    } finally {
      await dataSource.destroy();
    }
    let stdout = '';
    proc.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    proc.stdout.resume();
    expect(await exited).toBe(0);
    return stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as AuditRow);
  }

  it('export reads one snapshot: rows that retention prunes while it runs are still in it, and its chain has no gap', async () => {
    const count = 4000;
    const exported = await readWhilePruning(count, ['export', '--format', 'jsonl']);
    expect(exported.map((row) => row.id)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    for (let i = 1; i < exported.length; i++) expect(exported[i].prevHash).toBe(exported[i - 1].hash);
  });

  it('tail reads one snapshot too: rows pruned while it prints are still printed', async () => {
    const count = 3000;
    const printed = await readWhilePruning(count, ['tail', '-n', String(count), '--json']);
    expect(printed.map((row) => row.id)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
  });

  it('refuses rows deleted with a forged anchor and no pruning marker, although the head hash is unchanged', async () => {
    const { configPath, file } = await logWith(Array.from({ length: 32 }, (_, i) => entry({ at: NOW - 3 * MINUTE + i })));
    const before = runCli(['audit', 'verify', '--config', configPath]);
    expect(before.code).toBe(0);
    const head = /head ([0-9a-f]{64})/.exec(before.stdout)![1];
    // The reviewer's reproduction.
    sql(
      file,
      'DELETE FROM audit_entry WHERE id <= 10',
      `INSERT INTO audit_chain VALUES ('anchor', 10, (SELECT prev_hash FROM audit_entry WHERE id = 11), 10)`,
    );
    const db = new Database(file, { readonly: true });
    expect((db.prepare('SELECT hash FROM audit_entry ORDER BY id DESC LIMIT 1').get() as { hash: string }).hash).toBe(head);
    db.close();
    const after = runCli(['audit', 'verify', '--config', configPath]);
    expect(after.code).toBe(1);
    expect(after.stdout).toBe(
      'BROKEN before row 11: rows before id 11 are missing and no pruning marker in the chain accounts for them ' +
        '(audit_chain claims 10 rows pruned through id 10; there is no audit/pruned row)\n',
    );
  });
});

describe('switchboard audit verify and the schema the readers rely on', () => {
  it('a rewritten audit_record view fails verify (exit 1), and export warns that what it shows may not be the chained rows', async () => {
    const configPath = writeConfig({ mcpServers: {} });
    const config = loadConfigWithWarnings(configPath).config;
    await appendRows(config, ENTRIES.slice(0, 3));
    const db = new Database(databasePath(config));
    const view = (db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'audit_record'`).get() as { sql: string }).sql;
    db.exec('DROP VIEW audit_record');
    db.exec(view.replace(`json_extract(record, '$[16]') AS decision`, `'allowed' AS decision`));
    db.close();

    const verify = runCli(['audit', 'verify', '--config', configPath]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(/^BROKEN: the audit_record view, through which every reader shows the rows, is not the one the migrations made/);
    expect(verify.stderr).toBe('');
    const exported = runCli(['audit', 'export', '--format', 'jsonl', '--config', configPath]);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toMatch(/^warning: the audit_record view, .* run `switchboard audit verify`\nnote: exported 3 rows; resume with --after-id 3\n$/);
  });

  it('a trigger on the audit tables fails verify (exit 1), naming it', async () => {
    const configPath = writeConfig({ mcpServers: {} });
    const config = loadConfigWithWarnings(configPath).config;
    await appendRows(config, ENTRIES.slice(0, 2));
    const db = new Database(databasePath(config));
    db.exec(`CREATE TRIGGER keep_quiet BEFORE INSERT ON audit_entry WHEN NEW.principal = 'mallory' BEGIN SELECT RAISE(IGNORE); END`);
    db.close();
    const verify = runCli(['audit', 'verify', '--config', configPath]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(/^BROKEN: the database has triggers no migration made \("keep_quiet" on "audit_entry"\)/);
  });
});
