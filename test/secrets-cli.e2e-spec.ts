import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigWithWarnings } from '@switchboard/config';
import { sqliteConnection } from '@switchboard/persistence';
import { PrincipalSecretStore } from '@switchboard/secrets';
import { beforeEach, describe, expect, it } from 'vitest';
import { openMigrated } from '../apps/switchboard/src/audit-store.js';
import { SECRETS_KEY_FILE, readKeyFile } from '../apps/switchboard/src/digest-key.js';
import { tempDir, writeConfig } from './support/daemon.js';
import { runCli } from './support/cli.js';

/**
 * `switchboard secrets` through the compiled CLI on a fresh data dir: values go in on stdin,
 * come back out only through the store with the key, and never appear in clear on disk or
 * in the CLI's output.
 */

const TOKEN = 'ghp_e2e-secret-value-0123456789';

const cli = (args: string[], input = '') => runCli(['secrets', ...args], { input });

describe('switchboard secrets', () => {
  let configPath: string;
  let dataDir: string;
  const withConfig = (...args: string[]) => [...args, '--config', configPath];

  /** What the daemon will read: the values decrypted with the data dir's key. */
  async function storedValues(principal: string): Promise<Record<string, string>> {
    const { dataSource } = await openMigrated(loadConfigWithWarnings(configPath).config);
    try {
      return new PrincipalSecretStore(sqliteConnection(dataSource), readKeyFile(dataDir, SECRETS_KEY_FILE)).valuesFor(principal);
    } finally {
      await dataSource.destroy();
    }
  }

  beforeEach(() => {
    const dir = tempDir('sb-secrets-');
    configPath = writeConfig({ mcpServers: {} }, dir);
    dataDir = join(dir, 'data');
  });

  it('set reads the value from stdin, strips one trailing newline, and never prints it', async () => {
    const set = cli(withConfig('set', '--principal', 'alice', 'GITHUB_TOKEN'), `${TOKEN}\n`);
    expect(set).toMatchObject({ code: 0, stdout: 'set secret GITHUB_TOKEN for alice\n' });
    expect(set.stderr).not.toContain(TOKEN);
    expect(cli(withConfig('set', '--principal', 'alice', 'PEM'), 'line1\nline2\n\n').code).toBe(0);
    expect(await storedValues('alice')).toEqual({ GITHUB_TOKEN: TOKEN, PEM: 'line1\nline2\n' });
    expect(statSync(join(dataDir, SECRETS_KEY_FILE)).mode & 0o777).toBe(0o600);
  });

  it('list shows principal, name and time, never the value; --json likewise; --principal filters', () => {
    // It only reads: with no database yet, it says so rather than make one.
    expect(cli(withConfig('list'))).toMatchObject({ code: 1, stderr: expect.stringMatching(/^switchboard: no database at .*switchboard\.sqlite; start the daemon once or run `switchboard db migrate`\n$/) });
    expect(runCli(['db', 'migrate', ...withConfig()]).code).toBe(0);
    expect(cli(withConfig('list')).stdout).toMatch(/^no secrets; set one with: switchboard secrets set/);
    cli(withConfig('set', '--principal', 'bob', 'JIRA_TOKEN'), 'jira-value');
    cli(withConfig('set', '--principal', 'alice', 'GITHUB_TOKEN'), TOKEN);

    const table = cli(withConfig('list'));
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0].split(/\s+/)).toEqual(['PRINCIPAL', 'NAME', 'UPDATED']);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2))).toEqual([['alice', 'GITHUB_TOKEN'], ['bob', 'JIRA_TOKEN']]);
    expect(lines[1]).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(table.stdout).not.toContain(TOKEN);
    expect(table.stdout).not.toContain('jira-value');

    const json = cli(withConfig('list', '--json', '--principal', 'alice'));
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout) as { principal: string; name: string; updatedAt: number }[];
    expect(listed).toEqual([{ principal: 'alice', name: 'GITHUB_TOKEN', updatedAt: expect.any(Number) }]);
    expect(json.stdout).not.toContain(TOKEN);
    expect(cli(withConfig('list', '--principal', 'carol')).stdout).toMatch(/^no secrets for principal 'carol'/);
  });

  it('delete removes a secret (exit 0); deleting a missing one is exit 1', async () => {
    cli(withConfig('set', '--principal', 'alice', 'GITHUB_TOKEN'), TOKEN);
    const deleted = cli(withConfig('delete', '--principal', 'alice', 'GITHUB_TOKEN'));
    expect(deleted).toMatchObject({ code: 0, stdout: 'deleted secret GITHUB_TOKEN for alice\n' });
    expect(await storedValues('alice')).toEqual({});
    const missing = cli(withConfig('delete', '--principal', 'alice', 'GITHUB_TOKEN'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no secret GITHUB_TOKEN for principal 'alice'/);
  });

  it('usage errors exit 2: empty stdin, a bad name, no --principal, a value on argv', () => {
    for (const input of ['', '\n']) {
      const empty = cli(withConfig('set', '--principal', 'alice', 'GITHUB_TOKEN'), input);
      expect(empty.code).toBe(2);
      expect(empty.stderr).toMatch(/standard input, which was empty/);
    }
    expect(cli(withConfig('set', '--principal', 'alice', 'not-a-name'), TOKEN).stderr).toMatch(/secret name 'not-a-name'/);
    expect(cli(withConfig('set', 'GITHUB_TOKEN'), TOKEN).code).toBe(2);
    const onArgv = cli(withConfig('set', '--principal', 'alice', 'GITHUB_TOKEN', TOKEN));
    expect(onArgv.code).toBe(2);
    expect(onArgv.stderr).toMatch(/reads the value from standard input/);
    expect(onArgv.stderr).not.toContain(TOKEN);
    // A NUL byte: no environment variable or header can carry it, so no server could use it.
    const nul = cli(withConfig('set', '--principal', 'alice', 'GITHUB_TOKEN'), 'abc\u0000def\n');
    expect(nul.code).toBe(2);
    expect(nul.stderr).toContain('the value of GITHUB_TOKEN holds a NUL byte, which no environment variable or header can carry');
    expect(nul.stderr).not.toContain('abc');
    expect(cli(withConfig('rotate')).code).toBe(2);
    expect(cli(withConfig('list')).stdout).toMatch(/^no secrets/);
  });

  it('the value is not in clear anywhere in the data dir', () => {
    expect(cli(withConfig('set', '--principal', 'alice', 'GITHUB_TOKEN'), TOKEN).code).toBe(0);
    for (const file of readdirSync(dataDir)) {
      expect(readFileSync(join(dataDir, file)).includes(Buffer.from(TOKEN)), file).toBe(false);
    }
    expect(readdirSync(dataDir)).toContain('switchboard.sqlite');
  });
});
