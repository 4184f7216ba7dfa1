import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigWithWarnings } from '@switchboard/config';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendRows, ENTRIES } from './support/audit-samples.js';
import { cliRunsTimeout, createKey, runCli } from './support/cli.js';
import { tempDir, writeConfig } from './support/daemon.js';

/**
 * The read-only commands on a read-only copy of a data dir (an archived backup on read-only
 * storage): they must read it, not fail with SQLite's "attempt to write a readonly database".
 * SQLite reads a WAL-mode file only through a -shm file beside it, which it creates itself;
 * in a directory it cannot write, that fails unless the -wal and -shm are there already.
 *
 * The copy is made unwritable (directory 0555, files 0444) and read by a user who cannot
 * write it. Root may write anything, so as root the commands run as the unprivileged user
 * 65534 (nobody), which needs a path it may walk: the copies live under /tmp, not under the
 * run's private temp root.
 */

const asRoot = process.getuid?.() === 0;
const reader = asRoot ? { uid: 65534, gid: 65534 } : undefined;
const copiesRoot = asRoot ? mkdtempSync('/tmp/sb-read-only-copy-') : tempDir('sb-read-only-copy-');
afterAll(() => {
  chmodTree(copiesRoot, 0o755, 0o644);
  rmSync(copiesRoot, { recursive: true, force: true });
});

function chmodTree(dir: string, dirMode: number, fileMode: number): void {
  chmodSync(dir, dirMode);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) chmodTree(join(dir, entry.name), dirMode, fileMode);
    else chmodSync(join(dir, entry.name), fileMode);
  }
}

/** The files of the data dir named, copied into a new directory, then made read-only. */
function readOnlyCopy(dataDir: string, files: string[]): string {
  const copy = join(copiesRoot, `copy-${readdirSync(copiesRoot).length}`);
  mkdirSync(copy);
  for (const name of files) copyFileSync(join(dataDir, name), join(copy, name));
  chmodTree(copy, 0o555, 0o444);
  chmodSync(copiesRoot, 0o755);
  return copy;
}

/** Each entry's name, size and modification time, and the directory's: what a reader must leave as it was. */
const snapshot = (dir: string) => [
  statSync(dir).mtimeMs,
  ...readdirSync(dir).sort().map((name) => [name, statSync(join(dir, name)).size, statSync(join(dir, name)).mtimeMs]),
];

/** The command as the reader, on the copy, with the embedded default config (it needs no file of ours). */
const read = (copy: string, ...args: string[]) => runCli([...args, '--data-dir', copy], { user: reader });

describe('the read-only commands on a read-only copy of the data dir', () => {
  let dataDir: string;
  let head: string;

  beforeAll(async () => {
    const configPath = writeConfig({ mcpServers: {} });
    createKey(configPath, 'alice', 'dev');
    createKey(configPath, 'bob');
    const config = loadConfigWithWarnings(configPath).config;
    await appendRows(config, ENTRIES);
    dataDir = config.dataDir;
    const db = new Database(join(dataDir, 'switchboard.sqlite'), { readonly: true });
    head = (db.prepare('SELECT hash FROM audit_entry ORDER BY id DESC LIMIT 1').get() as { hash: string }).hash;
    db.close();
  });

  it('a copy of the database of a stopped daemon (WAL mode, no -wal beside it): verify, tail and keys list read it, and leave the directory as it was', { timeout: cliRunsTimeout(3) }, () => {
    const copy = readOnlyCopy(dataDir, ['switchboard.sqlite']);
    const before = snapshot(copy);

    const verified = read(copy, 'audit', 'verify');
    expect([verified.code, verified.stderr]).toEqual([0, '']);
    // The sample rows, after the two keys' `keys create` rows (admin-action.ts).
    const rows = ENTRIES.length + 2;
    expect(verified.stdout).toBe(`ok: ${rows} rows, chain intact (head ${head}, 0 rows pruned by retention)\n`);
    const tail = read(copy, 'audit', 'tail', '--json', '-n', String(rows));
    expect([tail.code, tail.stderr]).toEqual([0, '']);
    expect(tail.stdout.trimEnd().split('\n')).toHaveLength(rows);
    const keys = read(copy, 'keys', 'list', '--json');
    expect([keys.code, keys.stderr]).toEqual([0, '']);
    expect((JSON.parse(keys.stdout) as { name: string }[]).map((k) => k.name)).toEqual(['bob', 'alice']);

    expect(snapshot(copy), 'nothing was created or changed in the copy').toEqual(before);
  });

  it('a copy taken while a daemon had rows in the -wal, with its -shm: read as it is', { timeout: cliRunsTimeout(1) }, () => {
    const writer = new Database(join(dataDir, 'switchboard.sqlite'));
    try {
      writer.pragma('wal_autocheckpoint = 0');
      writer.prepare(`UPDATE api_key SET roles = '["ops"]' WHERE name = 'bob'`).run();
      const copy = readOnlyCopy(dataDir, ['switchboard.sqlite', 'switchboard.sqlite-wal', 'switchboard.sqlite-shm']);
      const before = snapshot(copy);
      const keys = read(copy, 'keys', 'list', '--json');
      expect([keys.code, keys.stderr]).toEqual([0, '']);
      expect((JSON.parse(keys.stdout) as { name: string; roles: string[] }[]).find((k) => k.name === 'bob')?.roles, 'the row in the -wal').toEqual(['ops']);
      expect(snapshot(copy)).toEqual(before);
    } finally {
      writer.close();
    }
  });

  it('a copy with rows in its -wal but no -shm says why it cannot be read and what to do, exit 1', { timeout: cliRunsTimeout(1) }, () => {
    const writer = new Database(join(dataDir, 'switchboard.sqlite'));
    try {
      writer.pragma('wal_autocheckpoint = 0');
      writer.prepare(`UPDATE api_key SET roles = '["dev","ops"]' WHERE name = 'alice'`).run();
      const copy = readOnlyCopy(dataDir, ['switchboard.sqlite', 'switchboard.sqlite-wal']);
      const file = join(copy, 'switchboard.sqlite');
      const keys = read(copy, 'keys', 'list');
      expect([keys.code, keys.stdout]).toEqual([1, '']);
      expect(keys.stderr).toBe(
        `switchboard: cannot open the database ${file}: ${file}-wal holds changes not yet in ${file}, and SQLite reads them only through ` +
          `${file}-shm, which it cannot create in a directory it cannot write; copy both files to a writable directory and read the copy there\n`,
      );
    } finally {
      writer.close();
    }
  });
});

// Not a test of Switchboard: that the copies above really are out of the reader's reach.
describe('the reader of those copies', () => {
  it('cannot write them', () => {
    const copy = readOnlyCopy(tempDir(), []);
    const probe = runCli(['--version'], { user: reader });
    expect(probe.code).toBe(0);
    expect(statSync(copy).mode & 0o777).toBe(0o555);
    expect(asRoot ? reader?.uid : process.getuid?.()).not.toBe(0);
  });
});
