import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { cliRunsTimeout, createKey, runCli } from './support/cli.js';
import { startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig } from './support/daemon.js';

/**
 * `switchboard policy check` for a caller who holds an API key, against a real data dir: it
 * must decide with the roles the key carries, as the daemon does, not with none. An admin
 * asking "may alice call this?" was told "allow" (her `users:` entry) while the daemon
 * refused her, since her key also carries `dev`, whose deny beats the allow.
 */
const POLICY = `
defaultEffect: deny
roles:
  admin:
    - { id: admin-all, allow: "*" }
  dev:
    - { id: echo, allow: call, tool: fx__echo }
    - { id: no-add, deny: call, tool: fx__add }
users:
  alice: [admin]
`;

afterAll(stopAllDaemons);

describe('policy check with the roles of the caller\'s API key', () => {
  let dir: string;
  let configPath: string;
  const check = (principal: string, tool: string, ...more: string[]) =>
    runCli(['policy', 'check', '--config', configPath, '--principal', principal, '--tool', tool, ...more]);

  beforeAll(() => {
    dir = tempDir('sb-policy-keys-');
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    configPath = writeConfig({ auth: { mode: 'required' }, policy: { file: 'policy.yaml' }, mcpServers: { fx: stdioFixture() } }, dir);
  });

  it('decides as the daemon did, for the key principals the audit log names', { timeout: cliRunsTimeout(8) }, async () => {
    const keys = { alice: createKey(configPath, 'alice', 'admin,dev'), bob: createKey(configPath, 'bob', 'dev') };
    const daemon = await startDaemon(configPath);
    for (const [name, tool] of [['alice', 'fx__add'], ['bob', 'fx__echo']] as const) {
      const client = new Client({ name: `e2e-policy-check-${name}`, version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${keys[name]}` } } }));
      await client.callTool({ name: tool, arguments: tool === 'fx__add' ? { a: 1, b: 2 } : { text: 'hi' } }).catch(() => undefined);
      await client.close();
    }
    const rows = auditRows(join(dir, 'data'), `method = 'tools/call'`).map((r) => [r.principal, r.name, r.decision, r.rule]);
    expect(rows).toEqual([
      ['alice', 'fx__add', 'denied', 'no-add'],
      ['bob', 'fx__echo', 'allowed', 'echo'],
    ]);

    // As the audit log names them, and as `key:NAME`.
    for (const principal of ['alice', 'key:alice']) {
      const alice = check(principal, 'fx__add');
      expect([alice.code, alice.stdout], principal).toEqual([
        3,
        expect.stringMatching(/^deny {2}rule: no-add\nprincipal alice has roles: admin, dev \(with the roles of key 'alice': admin, dev\); policy: .*policy\.yaml, default deny\n$/),
      ]);
    }
    const bob = check('bob', 'fx__echo');
    expect([bob.code, bob.stdout]).toEqual([0, expect.stringMatching(/^allow {2}rule: echo\nprincipal bob has roles: dev \(with the roles of key 'bob': dev\);/)]);

    // --roles is taken as given, whatever the key carries; that they are not the key's is said
    // in one line, so the answer is not taken for the key's own access.
    const given = check('bob', 'fx__add', '--roles', 'admin');
    expect([given.code, given.stdout]).toEqual([0, expect.stringMatching(/^allow {2}rule: admin-all\nprincipal bob has roles: admin \(with --roles: admin\);/)]);
    expect(given.stderr).toBe('note: key bob has roles [dev]; checked with --roles [admin] instead\n');
    // The key's own roles, in any order: nothing to say.
    expect(check('alice', 'fx__add', '--roles', 'dev,admin').stderr).toBe('');
  });

  it('says that no roles are known for a name no active key has, and for a token user without --roles', { timeout: cliRunsTimeout(4) }, () => {
    createKey(configPath, 'dan', 'admin');
    expect(runCli(['keys', 'revoke', 'dan', '--config', configPath]).code).toBe(0);
    const revoked = check('dan', 'fx__echo');
    expect([revoked.code, revoked.stdout]).toEqual([
      3,
      expect.stringMatching(/^deny {2}rule: policy:default-deny\nprincipal dan has roles: none \(no key roles known: key 'dan' was revoked, so the daemon refuses it\);/),
    ]);
    const carol = check('carol', 'fx__echo');
    expect(carol.stdout).toMatch(/^deny {2}rule: policy:default-deny\nprincipal carol has roles: none \(no key roles known: no active API key is named 'carol'; a token's user is jwt:carol, and needs --roles\);/);
    const token = check('jwt:alice', 'fx__echo');
    expect(token.stdout).toMatch(/^deny {2}rule: policy:default-deny\nprincipal jwt:alice has roles: none \(no token roles known: a token's roles come from its claims; give them with --roles\);/);
  });

  it('decides with the roles of a rotated key still in its overlap, as the daemon accepts it, when its replacement was revoked', { timeout: cliRunsTimeout(4) }, () => {
    createKey(configPath, 'eve', 'dev');
    const rotated = runCli(['keys', 'rotate', 'eve', '--config', configPath]);
    expect(rotated.code, rotated.stderr).toBe(0);
    const newId = /new key id (\d+)/.exec(rotated.stdout)![1];
    expect(runCli(['keys', 'revoke', newId, '--config', configPath]).code).toBe(0);
    const eve = check('eve', 'fx__echo');
    expect([eve.code, eve.stdout]).toEqual([0, expect.stringMatching(/^allow {2}rule: echo\nprincipal eve has roles: dev \(with the roles of key 'eve': dev\);/)]);
  });

  it('reads no database where there is none, and creates none', () => {
    const empty = writeConfig({ auth: { mode: 'required' }, policy: { file: join(dir, 'policy.yaml') }, mcpServers: { fx: stdioFixture() } });
    const r = runCli(['policy', 'check', '--config', empty, '--principal', 'alice', '--tool', 'fx__echo']);
    expect([r.code, r.stdout]).toEqual([
      0,
      expect.stringMatching(/^allow {2}rule: admin-all\nprincipal alice has roles: admin \(no key roles known: no database at .*switchboard\.sqlite, so no API keys\);/),
    ]);
    expect(existsSync(join(empty, '..', 'data'))).toBe(false);
  });
});
