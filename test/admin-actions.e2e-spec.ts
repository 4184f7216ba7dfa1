import { userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { cliRunsTimeout, createKey, runCli } from './support/cli.js';
import { tempDir, writeConfig } from './support/daemon.js';

/**
 * Who granted or withdrew access on a shared endpoint: each key and secret the command line
 * creates, rotates, revokes, sets or deletes is an audit row (method `admin`), in the chain
 * with the daemon's rows, by the user who ran the command; never with a key's or a
 * secret's value.
 */
describe('administrative commands are audited', () => {
  it('keys create, rotate and revoke, secrets set and delete: one row each, the chain intact, no value in any', { timeout: cliRunsTimeout(8) }, () => {
    const dir = tempDir('sb-admin-');
    const configPath = writeConfig({ mcpServers: {} }, dir);
    const cli = (...args: string[]) => runCli([...args, '--config', configPath]);
    const key = createKey(configPath, 'alice', 'dev');
    const rotated = cli('keys', 'rotate', 'alice', '--overlap', '1h');
    expect(rotated.code, rotated.stderr).toBe(0);
    const newKey = rotated.stdout.trimEnd().split('\n').at(-1)!;
    expect(cli('keys', 'revoke', 'alice').code).toBe(0);
    const set = runCli(['secrets', 'set', '--config', configPath, '--principal', 'alice', 'GH_TOKEN'], { input: 'ghp_secretvalue123\n' });
    expect(set.code, set.stderr).toBe(0);
    expect(cli('secrets', 'delete', '--principal', 'alice', 'GH_TOKEN').code).toBe(0);

    const rows = auditRows(join(dir, 'data'), `method = 'admin'`);
    expect(rows.map((r) => r.name)).toEqual(['keys create', 'keys rotate', 'keys revoke', 'secrets set', 'secrets delete']);
    for (const row of rows) {
      expect(row).toMatchObject({ principal: userInfo().username, auth_method: 'cli', decision: 'allowed', rule: 'admin:cli', outcome: 'ok' });
    }
    expect(JSON.parse(String(rows[0]!.arguments))).toMatchObject({ name: 'alice', id: 1, roles: ['dev'], expiresAt: null });
    expect(JSON.parse(String(rows[1]!.arguments))).toMatchObject({ name: 'alice', id: 2, replaced: 1 });
    expect(JSON.parse(String(rows[2]!.arguments))).toMatchObject({ ids: [2, 1], name: 'alice' });
    expect(JSON.parse(String(rows[3]!.arguments))).toEqual({ principal: 'alice', secret: 'GH_TOKEN' });
    const all = JSON.stringify(auditRows(join(dir, 'data')));
    for (const value of [key, newKey, 'ghp_secretvalue123']) expect(all).not.toContain(value);
    const verified = cli('audit', 'verify');
    expect([verified.code, verified.stdout]).toEqual([0, expect.stringMatching(/^ok: 5 rows, chain intact/)]);
  });

  it('with audit.enabled: false, none', { timeout: cliRunsTimeout(2) }, () => {
    const dir = tempDir('sb-admin-');
    const configPath = writeConfig({ audit: { enabled: false }, mcpServers: {} }, dir);
    createKey(configPath, 'bob');
    expect(auditRows(join(dir, 'data'), `method = 'admin'`)).toEqual([]);
  });
});
