import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, startDaemon, stopAllDaemons, tempDir, writeConfig } from './support/daemon.js';
import { runCli } from './support/cli.js';
import { auditRows } from './support/audit-rows.js';

afterAll(stopAllDaemons);

const facts = (row: Record<string, unknown>) => JSON.parse(String(row.arguments)) as Record<string, unknown>;

describe('the policy in force is in the audit log', () => {
  it('a row when the daemon loads the policy, at each reload (naming a widened default), and for a refused edit', async () => {
    const dir = tempDir();
    const file = join(dir, 'policy.yaml');
    writeFileSync(file, 'defaultEffect: deny\nroles:\n  dev:\n    - { id: dev-echo, allow: call, tool: fx__echo }\n');
    const configPath = writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: {}, log: { level: 'info' } }, dir);
    const daemon = await startDaemon(configPath);
    const dataDir = join(dir, 'data');
    const policyRows = () => auditRows(dataDir, `method LIKE 'policy/%'`);

    await eventually(() => policyRows().length === 1, 10_000, 'the loaded row');
    const [loaded] = policyRows();
    expect(loaded).toMatchObject({ principal: 'switchboard', auth_method: 'internal', method: 'policy/loaded', name: file, decision: 'allowed', rule: 'policy:loaded' });
    expect(facts(loaded)).toMatchObject({ file, defaultEffect: 'deny', roles: 1, rules: 1, digest: expect.stringMatching(/^sha256:/) });

    // The edit that opens the gateway: defaultEffect removed, so loopback's allow decides.
    writeFileSync(file, 'roles:\n  dev:\n    - { id: no-add, deny: call, tool: fx__add }\n');
    await eventually(() => policyRows().length === 2, 10_000, 'the reloaded row');
    const reloaded = policyRows()[1];
    expect(reloaded).toMatchObject({ method: 'policy/reloaded', name: file, decision: 'allowed', rule: 'policy:reloaded' });
    expect(facts(reloaded)).toMatchObject({ file, defaultEffect: 'allow', previousDefaultEffect: 'deny', previousDigest: facts(loaded).digest });
    expect(reloaded.error_message).toBe('the policy changed: the default effect is now allow (it was deny)');
    await daemon.waitForLog(/the default effect is now allow \(it was deny\)/, 10_000, 'the warning of a widened default');

    // An edit that does not validate: refused, the previous policy stays, and the row says why.
    writeFileSync(file, 'roles:\n  dev:\n    - { id: bad, allow: call, tool: fx__echo, when: { args.text: { nope: 1 } } }\n');
    await eventually(() => policyRows().length === 3, 10_000, 'the refused row');
    const refused = policyRows()[2];
    expect(refused).toMatchObject({ method: 'policy/refused', name: file, decision: 'refused', rule: 'policy:refused' });
    expect(String(facts(refused).problems)).toMatch(/nope/);
    expect(facts(refused).digest).toBe(facts(reloaded).digest);

    expect((await daemon.stop()).code).toBe(0);
    const verify = runCli(['audit', 'verify', '--config', configPath]);
    expect(verify.code, verify.stderr).toBe(0);
  });

  it('without a policy file the loaded row holds the default effect alone', async () => {
    const dir = tempDir();
    const daemon = await startDaemon(writeConfig({ mcpServers: {} }, dir));
    await eventually(() => auditRows(join(dir, 'data'), `method = 'policy/loaded'`).length === 1, 10_000, 'the loaded row');
    const [row] = auditRows(join(dir, 'data'), `method = 'policy/loaded'`);
    expect(row.name).toBeNull();
    expect(facts(row)).toEqual({ file: null, defaultEffect: 'allow' });
    await daemon.stop();
  });
});
