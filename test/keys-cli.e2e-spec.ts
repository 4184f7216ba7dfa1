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
