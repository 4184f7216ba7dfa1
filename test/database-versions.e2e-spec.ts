import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliRunsTimeout, createKey, runCli } from './support/cli.js';
import { tempDir, writeConfig } from './support/daemon.js';

/**
 * Every command that opens the data dir's database, on one whose schema is not this build's.
 * A database a newer Switchboard migrated (after a downgrade, or a second install of an older
 * version on the same data dir) was reported "up to date" by `db migrate`, and `start` wrote
 * to it: each must refuse it, naming the migrations it does not know, and leave it as it was.
 */

const STACK_TRACE = /\bat \S+ \(|node:internal|\.[cm]?[jt]s:\d+/;
const FUTURE = 'FutureThing1899999999999';

/** Each command that opens the database, with what it reads on stdin. */
const COMMANDS: { args: string[]; input?: string }[] = [
  { args: ['db', 'migrate'] },
  { args: ['start', '--port', '0'] },
  { args: ['stdio'] },
  { args: ['keys', 'list'] },
  { args: ['keys', 'create', '--name', 'bob'] },
  { args: ['keys', 'rotate', 'alice'] },
  { args: ['keys', 'revoke', 'alice'] },
  { args: ['secrets', 'list'] },
  { args: ['secrets', 'set', '--principal', 'alice', 'GITHUB_TOKEN'], input: 'ghp_value\n' },
  { args: ['secrets', 'delete', '--principal', 'alice', 'GITHUB_TOKEN'] },
  { args: ['tools', 'review'] },
  { args: ['tools', 'accept', 'fx/dyn'] },
  { args: ['audit', 'tail'] },
  { args: ['audit', 'export', '--format', 'jsonl'] },
  { args: ['audit', 'stats'] },
  { args: ['audit', 'verify'] },
  { args: ['audit', 'checkpoint'] },
  { args: ['policy', 'check', '--principal', 'alice', '--tool', 'fx__echo'] },
  // With --roles it reads the keys only for a note; it refuses all the same.
  { args: ['policy', 'check', '--principal', 'alice', '--roles', 'dev', '--tool', 'fx__echo'] },
];

describe('a database a newer Switchboard migrated', () => {
  let configPath: string;
  let dataDir: string;
  let file: string;

  beforeAll(() => {
    const dir = tempDir('sb-db-newer-');
    configPath = writeConfig({ mcpServers: {} }, dir);
    dataDir = join(dir, 'data');
    file = join(dataDir, 'switchboard.sqlite');
    createKey(configPath, 'alice', 'dev');
    // As the operator found it: `sqlite3 data/switchboard.sqlite "insert into migrations ..."`.
    const db = new Database(file);
    db.prepare('INSERT INTO migrations (timestamp, name) VALUES (?, ?)').run(1899999999999, FUTURE);
    db.close();
  });

  it('is refused by every command that opens it, exit 1, naming the migration, and left as it was', { timeout: cliRunsTimeout(COMMANDS.length) }, () => {
    const before = readFileSync(file);
    const others = () => readdirSync(dataDir).filter((name) => !name.startsWith('switchboard.sqlite')).sort();
    const files = others();
    const refusal = (noun: string) =>
      `switchboard: the ${noun} ${file} was migrated by a newer Switchboard (migration this version does not know: ${FUTURE}); ` +
      'run that version, or restore a backup taken before the upgrade\n';
    for (const { args, input } of COMMANDS) {
      const r = runCli([...args, '--config', configPath], { input, timeoutMs: 20_000 });
      const what = args.join(' ');
      expect(r.code, `${what}: ${r.stderr}`).toBe(1);
      expect(r.stderr, what).toContain(refusal(args[0] === 'audit' ? 'audit database' : 'database'));
      expect(r.stderr, what).not.toMatch(STACK_TRACE);
      expect(r.stdout, what).toBe('');
      expect(readFileSync(file).equals(before), `${what} left the database as it was`).toBe(true);
      expect(others(), `${what} made no file (a key, a journal)`).toEqual(files);
    }
  });
});
