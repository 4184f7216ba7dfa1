import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { tempDir, writeConfig } from './support/daemon.js';
import { cliRunsTimeout, createKey, runCli } from './support/cli.js';

/**
 * `switchboard keys revoke` through the compiled CLI on a fresh data dir: what it says when
 * there is nothing to revoke. An administrator who revokes a leaked key must not be told it
 * "stops working on the next request" when it stopped long ago, nor be sent looking for a
 * key id when they typed a name.
 */
describe('switchboard keys revoke', () => {
  let configPath: string;
  const revoke = (word: string) => runCli(['keys', 'revoke', word, '--config', configPath]);

  beforeEach(() => {
    configPath = writeConfig({ mcpServers: {} }, tempDir('sb-keys-'));
  });

  it('a key revoked before is said to be so, by id (exit 0) and by name (exit 1)', { timeout: cliRunsTimeout(4) }, () => {
    createKey(configPath, 'frank', 'dev');
    expect(revoke('frank')).toMatchObject({ code: 0, stdout: expect.stringMatching(/^revoked key 'frank' \(id 1\); it stops working on the next request/) });

    const byId = revoke('1');
    expect(byId.code).toBe(0);
    expect(byId.stdout).toMatch(/^key 'frank' \(id 1\) was already revoked at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ; nothing changed\n$/);

    const byName = revoke('frank');
    expect(byName.code).toBe(1);
    expect(byName.stderr).toMatch(/^switchboard: no active key named 'frank': key id 1 of that name was revoked at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/);
  });

  it('an unknown id is said to be an id, an unknown name a name, with the name it may have meant', { timeout: cliRunsTimeout(3) }, () => {
    createKey(configPath, 'gina');
    expect(revoke('99')).toMatchObject({ code: 1, stderr: 'switchboard: no key with id 99\n' });
    expect(revoke('Gina')).toMatchObject({ code: 1, stderr: "switchboard: no active key named 'Gina' (did you mean 'gina'?)\n" });
    expect(revoke('nobody')).toMatchObject({ code: 1, stderr: "switchboard: no active key named 'nobody'\n" });
  });
});

/**
 * `switchboard keys create --roles` against the config's policy: a misspelt role (`admn`) was
 * stored silently and then matched no rule, so the key's holder simply lacked access.
 */
describe('switchboard keys create', () => {
  it('warns of roles the policy does not define, naming a close one, and still creates the key (exit 0)', { timeout: cliRunsTimeout(3) }, () => {
    const dir = tempDir('sb-keys-');
    writeFileSync(join(dir, 'policy.yaml'), 'roles:\n  dev:\n    - { allow: call, server: fx }\n  auditors:\n    - { allow: list }\n');
    const configPath = writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: {} }, dir);
    const made = runCli(['keys', 'create', '--config', configPath, '--name', 'hal', '--roles', 'dev,admn,auditor,zzz']);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/^created key 'hal' \(id 1; roles: dev, admn, auditor, zzz;/);
    // The first key of a data dir makes its database, and says so first.
    const [created, ...warnings] = made.stderr.split('\n').filter(Boolean);
    expect(created).toBe(`note: created the database ${join(dir, 'data', 'switchboard.sqlite')}: there was none in this data dir`);
    const carried = '; the key carries it, but no rule applies to it until the policy defines it';
    expect(warnings).toEqual([
      // `admin` is known without the policy: it opens the admin API.
      `warning: ${join(dir, 'policy.yaml')}: no role 'admn' is defined under roles (did you mean \`admin\`?)${carried}`,
      `warning: ${join(dir, 'policy.yaml')}: no role 'auditor' is defined under roles (did you mean \`auditors\`?)${carried}`,
      `warning: ${join(dir, 'policy.yaml')}: no role 'zzz' is defined under roles${carried}`,
    ]);
    // Roles the policy defines, `admin`, and a config without a policy file: nothing to warn of.
    expect(runCli(['keys', 'create', '--config', configPath, '--name', 'ida', '--roles', 'dev,admin']).stderr).toBe('');
    expect(runCli(['keys', 'create', '--config', writeConfig({ mcpServers: {} }, tempDir('sb-keys-')), '--name', 'joe', '--roles', 'admn']).stderr).not.toMatch(/warning/);
  });
});

const iso = (ms: number | null): string => new Date(ms!).toISOString().slice(0, 19) + 'Z';

/**
 * The keys commands on a key that has expired. It is refused already, so keys create must say
 * why its name is still taken and how to get it back, keys rotate must not call it refused
 * "from now on", and keys revoke must not say it "stops working".
 */
describe('switchboard keys, of a key that has expired', () => {
  let configPath: string;
  const cli = (...args: string[]) => runCli([...args, '--config', configPath]);
  const listed = () => JSON.parse(cli('keys', 'list', '--json').stdout) as { id: number; name: string; status: string; createdAt: number; expiresAt: number | null }[];
  /** Keys that expire 1 s after they are made, once they have (the expiry is set before keys create ends). */
  const expiredKeys = async (...names: string[]) => {
    for (const name of names) {
      const made = cli('keys', 'create', '--name', name, '--roles', 'dev', '--expires', '1s');
      expect(made.code, made.stderr).toBe(0);
    }
    await new Promise((resolve) => setTimeout(resolve, 1100));
  };

  beforeEach(() => {
    configPath = writeConfig({ mcpServers: {} }, tempDir('sb-keys-'));
  });

  it('keys create of a name whose keys all expired says when, and that keys rotate or keys revoke gets it back (exit 1)', { timeout: cliRunsTimeout(6) }, async () => {
    await expiredKeys('frank', 'gus');
    expect(cli('keys', 'rotate', 'gus', '--overlap', '0').code).toBe(0);
    // The new key has the old one's lifetime, 1 s.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const [gusNew, gusOld, frank] = listed();
    expect([frank.status, gusOld.status, gusNew.status]).toEqual(['expired', 'expired', 'expired']);

    expect(cli('keys', 'create', '--name', 'Frank', '--roles', 'ops')).toMatchObject({
      code: 1,
      stderr: `switchboard: a key named 'frank' already exists, but it expired at ${iso(frank.expiresAt)} (id ${frank.id}): keys rotate frank issues a new key of the same name and roles (dev), or keys revoke frank frees the name for keys create\n`,
    });
    expect(cli('keys', 'create', '--name', 'gus')).toMatchObject({
      code: 1,
      stderr: `switchboard: a key named 'gus' already exists, but its keys expired (id ${gusNew.id} at ${iso(gusNew.expiresAt)}, id ${gusOld.id} at ${iso(gusOld.expiresAt)}): keys rotate gus issues a new key of the same name and roles (dev), or keys revoke gus frees the name for keys create\n`,
    });
  });

  it('keys rotate of a key that had expired says when, not that it is refused from now on; the new key has its lifetime from now', { timeout: cliRunsTimeout(3) }, async () => {
    await expiredKeys('gina');
    const run = cli('keys', 'rotate', 'gina');
    expect(run.code, run.stderr).toBe(0);
    const [current, old] = listed();
    expect(run.stdout.split('\n')[0]).toBe(
      `rotated key 'gina': new key id ${current.id} (roles: dev; expires: ${iso(current.expiresAt)}); the old key (id ${old.id}) had already expired at ${iso(old.expiresAt)}`,
    );
    expect(current.expiresAt! - current.createdAt).toBe(old.expiresAt! - old.createdAt);
    expect(old).toMatchObject({ status: 'expired', replacedBy: current.id });
  });

  it('keys revoke says which keys it stops and which had already expired, or been rotated out', { timeout: cliRunsTimeout(8) }, async () => {
    await expiredKeys('hal', 'jo');
    createKey(configPath, 'ivy');
    expect(cli('keys', 'rotate', 'ivy', '--overlap', '0').code).toBe(0);
    const [ivy, ivyOld, jo, hal] = listed();

    expect(cli('keys', 'revoke', 'hal')).toMatchObject({ code: 0, stdout: `revoked key 'hal' (id ${hal.id}); it had already expired at ${iso(hal.expiresAt)}\n` });
    expect(cli('keys', 'revoke', String(jo.id))).toMatchObject({ code: 0, stdout: `revoked key 'jo' (id ${jo.id}); it had already expired at ${iso(jo.expiresAt)}\n` });
    expect(cli('keys', 'revoke', 'ivy')).toMatchObject({
      code: 0,
      stdout:
        `revoked 2 keys named 'ivy' (ids ${ivy.id}, ${ivyOld.id}); id ${ivy.id} stops working on the next request, and sessions and switchboard stdio processes using it end within 2 s; ` +
        `id ${ivyOld.id} had already expired at ${iso(ivyOld.expiresAt)} (rotated out by id ${ivy.id})\n`,
    });
  });
});
