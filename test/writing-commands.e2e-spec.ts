import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliRunsTimeout, runCli } from './support/cli.js';
import { tempDir, writeConfig } from './support/daemon.js';
import { olderDatabase } from './support/older-database.js';

/**
 * The commands that write the data dir's database. Those that add (`keys create`, `secrets
 * set`) create and migrate it when it does not exist yet, so keys can be made before the
 * first start, as docs/auth.md promises, and say so; those that change rows already there
 * (rotate, revoke, delete, accept) need one. None migrates a database an older Switchboard
 * left: during an upgrade the older daemon may still run on it.
 */

const STACK_TRACE = /\bat \S+ \(|node:internal|\.[cm]?[jt]s:\d+/;

const CHANGING: { args: string[]; input?: string }[] = [
  { args: ['keys', 'rotate', 'alice'] },
  { args: ['keys', 'revoke', 'alice'] },
  { args: ['secrets', 'delete', '--principal', 'alice', 'GITHUB_TOKEN'] },
  { args: ['tools', 'accept', 'fx/dyn'] },
];
const ADDING: { args: string[]; input?: string }[] = [
  { args: ['keys', 'create', '--name', 'bob'] },
  { args: ['secrets', 'set', '--principal', 'alice', 'GITHUB_TOKEN'], input: 'ghp_value\n' },
];

describe('a command that writes, on a data dir with no database', () => {
  it('refuses it when it changes rows, exit 1, naming the file, and creates nothing', { timeout: cliRunsTimeout(CHANGING.length) }, () => {
    const configPath = writeConfig({ mcpServers: {} });
    const typo = join(tempDir(), 'dta');
    for (const { args } of CHANGING) {
      const r = runCli([...args, '--config', configPath, '--data-dir', typo]);
      expect([r.code, r.stdout, r.stderr], args.join(' ')).toEqual([
        1,
        '',
        `switchboard: no database at ${join(typo, 'switchboard.sqlite')}; start the daemon once or run \`switchboard db migrate\`\n`,
      ]);
      expect(existsSync(typo), `${args.join(' ')} made no directory`).toBe(false);
    }
  });

  it.each(ADDING.map((c) => [c.args.slice(0, 2).join(' '), c] as const))('%s creates and migrates it, and says so', (_name, { args, input }) => {
    const configPath = writeConfig({ mcpServers: {} });
    const dataDir = join(tempDir(), 'new');
    const r = runCli([...args, '--config', configPath, '--data-dir', dataDir], { input });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`note: created the database ${join(dataDir, 'switchboard.sqlite')}: there was none in this data dir\n`);
    expect(runCli(['db', 'migrate', '--config', configPath, '--data-dir', dataDir]).stdout).toMatch(/^database is up to date\n/);
  });

  it('keys create migrates a database file no migration was applied to (one a start created before it was stopped)', () => {
    const dir = tempDir();
    const configPath = writeConfig({ mcpServers: {} }, dir);
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'data', 'switchboard.sqlite'), '');
    const r = runCli(['keys', 'create', '--name', 'bob', '--config', configPath]);
    expect(r.code, r.stderr).toBe(0);
    expect(runCli(['keys', 'list', '--config', configPath]).stdout).toMatch(/\bbob\b/);
  });
});

describe('a command that writes, on a database an older Switchboard left', () => {
  const commands = [...CHANGING, ...ADDING];

  it('refuses it until db migrate, exit 1, naming what is not applied, and leaves it as it was', { timeout: cliRunsTimeout(commands.length + 2) }, async () => {
    const { dir, configPath, file, last } = await olderDatabase();
    const before = readFileSync(file);
    for (const { args, input } of commands) {
      const r = runCli([...args, '--config', configPath], { input });
      const what = args.join(' ');
      expect([r.code, r.stdout], `${what}: ${r.stderr}`).toEqual([1, '']);
      expect(r.stderr, what).toBe(
        `switchboard: the database ${file} is from an older Switchboard (1 migration(s) not applied: ${last}); run \`switchboard db migrate\` (or start the daemon) first\n`,
      );
      expect(r.stderr, what).not.toMatch(STACK_TRACE);
      expect(readFileSync(file).equals(before), `${what} left the database as it was`).toBe(true);
      expect(existsSync(join(dir, 'data', 'upstream-secrets.key')), `${what} made no secrets key`).toBe(false);
    }
    expect(runCli(['db', 'migrate', '--config', configPath]).code).toBe(0);
    expect(runCli(['keys', 'create', '--name', 'bob', '--config', configPath])).toMatchObject({ code: 0, stderr: '' });
  });
});
