import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS } from '@switchboard/migrations';
import type { SqliteConnection } from '@switchboard/persistence';
import { PrincipalSecretStore } from '@switchboard/secrets';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliRunsTimeout, createKey, runCli, runCliInBackground, type CliRun } from './support/cli.js';
import { startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig } from './support/daemon.js';
import { olderDatabase } from './support/older-database.js';
import { connectHost } from './support/hosts.js';
import { SECRETS_KEY_FILE, readKeyFile } from '../apps/switchboard/src/digest-key.js';

/**
 * `switchboard db backup`: a consistent copy of the database taken while the daemon runs.
 * The obvious backup, `cp switchboard.sqlite`, loses the rows still in the -wal file: a copy
 * verified "ok: 32 rows" while 73 were committed.
 */

afterAll(stopAllDaemons);

/** What backup printed about the audit log: its rows, and the head's id and hash. */
function copiedLog(run: CliRun): { rows: number; headId: number; hash: string } {
  const m = /^ {2}audit log: (\d+) rows, head id (\d+) \(hash ([0-9a-f]{64})\)$/m.exec(run.stdout);
  expect(m, run.stdout).not.toBeNull();
  return { rows: Number(m![1]), headId: Number(m![2]), hash: m![3] };
}

describe('db backup while the daemon writes rows', () => {
  let configPath: string;
  let dataDir: string;
  let backupDir: string;
  let output: string;
  let backup: CliRun;

  beforeAll(async () => {
    const dir = tempDir('sb-backup-');
    configPath = writeConfig({ mcpServers: { fx: stdioFixture() } }, dir);
    dataDir = join(dir, 'data');
    createKey(configPath, 'alice', 'dev');
    expect(runCli(['secrets', 'set', '--principal', 'alice', 'GITHUB_TOKEN', '--config', configPath], { input: 'ghp_value' }).code).toBe(0);
    const daemon = await startDaemon(configPath);
    const hosts = await Promise.all([0, 1, 2].map(() => connectHost('streamable-http', { daemon })));
    let answered = 0;
    let stopping = false;
    const load = hosts.map(async (host, h) => {
      for (let i = 0; !stopping; i++) {
        await host.client.callTool({ name: 'fx__echo', arguments: { text: `h${h}-${i}` } });
        answered++;
      }
    });
    while (answered < 50) await new Promise((r) => setTimeout(r, 10));
    backupDir = tempDir('sb-backup-out-');
    output = join(backupDir, 'switchboard.sqlite');
    // Not spawnSync: the hosts keep calling while it copies.
    backup = await runCliInBackground(['db', 'backup', '--config', configPath, '--output', output]);
    const afterBackup = answered;
    while (answered < afterBackup + 20) await new Promise((r) => setTimeout(r, 10));
    stopping = true;
    await Promise.all(load);
    await Promise.all(hosts.map((h) => h.close()));
    await daemon.stop();
  }, 120_000);

  it('copies the database as it was at one moment: audit verify passes on it, and its head is a row of the live log', { timeout: cliRunsTimeout(2) }, () => {
    expect([backup.code, backup.stderr]).toEqual([0, '']);
    expect(backup.stdout).toMatch(new RegExp(`^backed up ${join(dataDir, 'switchboard.sqlite')} to ${output} \\(\\d+(\\.\\d)? [KMG]iB\\):\\n`));
    // The daemon pinned the fixture's tools.
    expect(backup.stdout).toMatch(/\n {2}1 API key, 1 upstream secret, [1-9]\d* tool pins\n/);
    const { rows, headId, hash } = copiedLog(backup);
    expect(rows).toBeGreaterThan(0);

    const before = readdirSync(backupDir);
    const verified = runCli(['audit', 'verify', '--config', configPath, '--data-dir', backupDir]);
    expect([verified.code, verified.stderr]).toEqual([0, '']);
    expect(verified.stdout).toBe(`ok: ${rows} rows, chain intact (head ${hash}, 0 rows pruned by retention)\n`);
    expect(readdirSync(backupDir), 'the copy needs no -wal or -shm beside it, so reading it made none').toEqual(before);

    const live = new Database(join(dataDir, 'switchboard.sqlite'), { readonly: true });
    try {
      expect((live.prepare('SELECT hash FROM audit_entry WHERE id = ?').get(headId) as { hash: string }).hash).toBe(hash);
      expect((live.prepare('SELECT count(*) AS n FROM audit_entry').get() as { n: number }).n, 'rows committed after the copy').toBeGreaterThan(rows);
    } finally {
      live.close();
    }
  });

  it('makes the file 0600, in rollback-journal mode (nothing beside it needed to read it)', () => {
    expect(statSync(output).mode & 0o777).toBe(0o600);
    const header = readFileSync(output).subarray(18, 20);
    expect([...header]).toEqual([1, 1]);
    expect(readdirSync(backupDir)).toEqual(['switchboard.sqlite']);
  });

  it('says what it does not hold: the journal\'s rows not committed yet, and the key files to keep with it', () => {
    const notIn = backup.stdout.slice(backup.stdout.indexOf('not in it'));
    expect(notIn).toMatch(new RegExp(`^ {2}\\d+ audit rows? in the journal ${join(dataDir, 'audit-journal')} not committed yet`, 'm'));
    expect(notIn).toMatch(new RegExp(`^ {4}${join(dataDir, 'upstream-secrets.key')} +decrypts the upstream secrets`, 'm'));
    expect(notIn).toMatch(new RegExp(`^ {4}${join(dataDir, 'audit-digest.key')} +`, 'm'));
  });

  it('restored, it is an older copy that audit verify --checkpoint shows, with a checkpoint of the live log', { timeout: cliRunsTimeout(2) }, () => {
    const checkpoint = runCli(['audit', 'checkpoint', '--config', configPath]);
    expect(checkpoint.code).toBe(0);
    const file = join(backupDir, '..', 'checkpoints.txt');
    writeFileSync(file, checkpoint.stdout);
    const liveHead = Number(/ id=(\d+) /.exec(checkpoint.stdout)![1]);
    const verified = runCli(['audit', 'verify', '--config', configPath, '--data-dir', backupDir, '--checkpoint', file]);
    expect(verified.code).toBe(1);
    expect(verified.stdout).toContain(`BROKEN: rows cut from the newest end: checkpoint row ${liveHead} (written `);
    expect(verified.stdout).toContain(`is gone, head is ${copiedLog(backup).headId}`);
  });

  it('restored with the key files into a data dir of its own: the daemon runs on it, its secrets decrypt, and a key revoked since the backup is active again', { timeout: cliRunsTimeout(6) }, async () => {
    expect(runCli(['keys', 'revoke', 'alice', '--config', configPath]).code).toBe(0);
    const restored = join(tempDir('sb-restored-'), 'data');
    mkdirSync(restored, { mode: 0o700 });
    copyFileSync(output, join(restored, 'switchboard.sqlite'));
    for (const key of readdirSync(dataDir).filter((name) => name.endsWith('.key'))) copyFileSync(join(dataDir, key), join(restored, key));

    const keys = JSON.parse(runCli(['keys', 'list', '--json', '--config', configPath, '--data-dir', restored]).stdout) as { name: string; status: string }[];
    expect(keys.map((k) => [k.name, k.status]), 'revoked after the backup: active in it').toEqual([['alice', 'active']]);

    const daemon = await startDaemon(configPath, ['--data-dir', restored]);
    const host = await connectHost('streamable-http', { daemon });
    await host.client.callTool({ name: 'fx__echo', arguments: { text: 'after the restore' } });
    await host.close();
    await daemon.stop();
    expect([...readFileSync(join(restored, 'switchboard.sqlite')).subarray(18, 20)], 'WAL again').toEqual([2, 2]);
    const verified = runCli(['audit', 'verify', '--config', configPath, '--data-dir', restored]);
    expect(verified.code, verified.stdout).toBe(0);
    expect(Number(/^ok: (\d+) rows, chain intact/.exec(verified.stdout)![1])).toBeGreaterThan(copiedLog(backup).rows);

    const db = new Database(join(restored, 'switchboard.sqlite'), { readonly: true });
    try {
      const store = new PrincipalSecretStore(db as unknown as SqliteConnection, readKeyFile(restored, SECRETS_KEY_FILE));
      expect(store.valuesFor('alice')).toEqual({ GITHUB_TOKEN: 'ghp_value' });
    } finally {
      db.close();
    }
    expect(runCli(['keys', 'revoke', 'alice', '--config', configPath, '--data-dir', restored]).code, 'revoked again').toBe(0);
  });
});

describe('db backup refuses', () => {
  let configPath: string;
  let dataDir: string;
  let elsewhere: string;
  const backupTo = (output: string) => runCli(['db', 'backup', '--config', configPath, '--output', output]);

  beforeAll(() => {
    const dir = tempDir('sb-backup-');
    configPath = writeConfig({ mcpServers: {} }, dir);
    dataDir = join(dir, 'data');
    expect(runCli(['db', 'migrate', '--config', configPath]).code).toBe(0);
    elsewhere = tempDir('sb-backup-out-');
  });

  it('to overwrite a file, or to write beside a -wal or -journal left by another', { timeout: cliRunsTimeout(3) }, () => {
    const existing = join(elsewhere, 'existing.sqlite');
    writeFileSync(existing, 'last week\'s backup');
    expect(backupTo(existing)).toEqual({ code: 1, stdout: '', stderr: `switchboard: --output ${existing} exists; db backup never overwrites a file: name a new one\n` });
    expect(readFileSync(existing, 'utf8')).toBe('last week\'s backup');
    for (const suffix of ['-wal', '-journal']) {
      const output = join(elsewhere, `new${suffix}.sqlite`);
      writeFileSync(`${output}${suffix}`, '');
      expect(backupTo(output)).toEqual({
        code: 1,
        stdout: '',
        stderr: `switchboard: ${output}${suffix} exists beside --output ${output}; SQLite would take it for part of the new file: remove it or name another file\n`,
      });
      expect(existsSync(output)).toBe(false);
    }
  });

  it('to write into the data dir (usage, exit 2), or into a directory that does not exist', { timeout: cliRunsTimeout(3) }, () => {
    for (const output of [join(dataDir, 'backup.sqlite'), join(dataDir, 'audit-journal', 'backup.sqlite')]) {
      expect(backupTo(output)).toEqual({
        code: 2,
        stdout: '',
        stderr: `switchboard: --output ${output} is in the data directory ${dataDir}; a backup there is lost with the data dir it is for: write it elsewhere\n`,
      });
    }
    const missing = join(elsewhere, 'no-such-dir', 'backup.sqlite');
    expect(backupTo(missing)).toEqual({ code: 1, stdout: '', stderr: `switchboard: --output ${missing}: there is no directory ${join(elsewhere, 'no-such-dir')}\n` });
  });

  it('without --output (exit 2), and a data dir with no database (exit 1)', { timeout: cliRunsTimeout(2) }, () => {
    expect(runCli(['db', 'backup', '--config', configPath])).toMatchObject({ code: 2, stderr: 'switchboard: db backup needs --output FILE\n' });
    const typo = join(tempDir(), 'dta');
    expect(runCli(['db', 'backup', '--config', configPath, '--data-dir', typo, '--output', join(elsewhere, 'x.sqlite')])).toEqual({
      code: 1,
      stdout: '',
      stderr: `switchboard: no database at ${join(typo, 'switchboard.sqlite')}; start the daemon once or run \`switchboard db migrate\`\n`,
    });
    expect(existsSync(join(elsewhere, 'x.sqlite'))).toBe(false);
  });
});

describe('db backup of a database an older Switchboard left', () => {
  it('copies it as it is, before db migrate changes it, and says so', { timeout: cliRunsTimeout(1) }, async () => {
    const { configPath, last } = await olderDatabase('sb-backup-');
    const output = join(tempDir('sb-backup-out-'), 'before-upgrade.sqlite');
    const r = runCli(['db', 'backup', '--config', configPath, '--output', output]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(
      `  it is from an older Switchboard (1 migration(s) not applied: ${last}): restored, it is migrated at the next start\n`,
    );
    const copy = new Database(output, { readonly: true });
    expect((copy.prepare('SELECT count(*) AS n FROM migrations').get() as { n: number }).n).toBe(MIGRATIONS.length - 1);
    copy.close();
  });
});
