import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliRunsTimeout, runCli } from './support/cli.js';
import { tempDir, writeConfig } from './support/daemon.js';
import { olderDatabase } from './support/older-database.js';

/**
 * The commands that only read the data dir's database. They must never create, migrate or
 * write it: `keys list --data-dir /tmp/typo` made the directories and a database (and
 * `secrets list` a secrets key too) and said "no keys", exit 0; run on the database of an
 * older Switchboard during an upgrade, they migrated it under the old daemon still running.
 */

const STACK_TRACE = /\bat \S+ \(|node:internal|\.[cm]?[jt]s:\d+/;

/** Each command that only reads, and what it calls the file. */
const READERS: { args: string[]; noun: string }[] = [
  { args: ['keys', 'list'], noun: 'database' },
  { args: ['keys', 'list', '--json'], noun: 'database' },
  { args: ['secrets', 'list'], noun: 'database' },
  { args: ['tools', 'review'], noun: 'database' },
  { args: ['audit', 'tail'], noun: 'audit database' },
  { args: ['audit', 'checkpoint'], noun: 'audit database' },
];

describe('a command that only reads, on a data dir with no database', () => {
  it('refuses it, exit 1, naming the file and how it is made, and creates nothing', { timeout: cliRunsTimeout(READERS.length) }, () => {
    const configPath = writeConfig({ mcpServers: {} });
    const typo = join(tempDir(), 'dta');
    const file = join(typo, 'switchboard.sqlite');
    for (const { args, noun } of READERS) {
      const r = runCli([...args, '--config', configPath, '--data-dir', typo]);
      const what = args.join(' ');
      expect([r.code, r.stdout, r.stderr], what).toEqual([1, '', `switchboard: no ${noun} at ${file}; start the daemon once or run \`switchboard db migrate\`\n`]);
      expect(existsSync(typo), `${what} made no directory`).toBe(false);
    }
  });
});

describe('a command that only reads, on a database an older Switchboard left', () => {
  const commands = [...READERS, { args: ['policy', 'check', '--principal', 'alice', '--tool', 'fx__echo'], noun: 'database' }];

  it('refuses it until db migrate, exit 1, naming what is not applied, and leaves it as it was', { timeout: cliRunsTimeout(commands.length + 3) }, async () => {
    const { dir, configPath, file, last } = await olderDatabase();
    const before = readFileSync(file);
    for (const { args, noun } of commands) {
      const r = runCli([...args, '--config', configPath]);
      const what = args.join(' ');
      expect([r.code, r.stdout], what).toEqual([1, '']);
      expect(r.stderr, what).toBe(
        `switchboard: the ${noun} ${file} is from an older Switchboard (1 migration(s) not applied: ${last}); run \`switchboard db migrate\` (or start the daemon) first\n`,
      );
      expect(r.stderr, what).not.toMatch(STACK_TRACE);
      expect(readFileSync(file).equals(before), `${what} left the database as it was`).toBe(true);
    }
    expect(runCli(['db', 'migrate', '--config', configPath]).stdout).toMatch(`applied 1 migration(s):\n  ${last}\n`);
    expect(runCli(['keys', 'list', '--config', configPath])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^no keys;/) });
    expect(runCli(['secrets', 'list', '--config', configPath])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^no secrets;/) });
    expect(existsSync(join(dir, 'data', 'upstream-secrets.key')), 'secrets list made no secrets key: it decrypts nothing').toBe(false);
  });
});
