import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { connectHost } from './support/hosts.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig } from './support/daemon.js';

/**
 * SIGHUP to the daemon: what service managers (systemd's ExecReload), logrotate scripts and
 * operators send to have a daemon read its files again. It must not end the daemon (its
 * default action would: no drain, no final commit, and systemd does not restart a process a
 * HUP ended), and it reads the config and policy files at once.
 */

afterAll(stopAllDaemons);

describe('SIGHUP to the daemon', () => {
  it('reads the config and policy files again at once; a call in flight completes, the daemon lives on', async () => {
    const dir = tempDir();
    const policy = `${dir}/policy.yaml`;
    writeFileSync(policy, 'roles:\n  everyone:\n    - { id: all, allow: "*" }\neveryone: [everyone]\n');
    const configPath = writeConfig({ log: { level: 'info' }, policy: { file: policy }, mcpServers: { fx: stdioFixture() } }, dir);
    const daemon = await startDaemon(configPath);
    const host = await connectHost('streamable-http', { daemon });
    const slow = host.client.callTool({ name: 'fx__slow', arguments: { ms: 1_500 } });
    await new Promise((resolve) => setTimeout(resolve, 200));

    daemon.proc.kill('SIGHUP');
    await daemon.waitForLog((line) => line.includes('"signal":"SIGHUP"') && line.includes('reading the config and policy files again'));
    await daemon.waitForLog(/the config and policy files are unchanged/);
    expect((await slow).isError ?? false).toBe(false);

    // A change, and the signal: applied without waiting for the file watch's debounce or poll.
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as { mcpServers: Record<string, unknown> };
    config.mcpServers.fy = stdioFixture();
    writeFileSync(configPath, JSON.stringify(config, null, 2));
    daemon.proc.kill('SIGHUP');
    await daemon.waitForLog(/config reloaded/);
    await eventually(async () => (await host.client.listTools()).tools.some((t) => t.name === 'fy__echo') || undefined, 15_000, 'fy listed');
    await host.close();
    expect(daemon.stderr()).not.toMatch(/shutting down/);
    expect((await daemon.stop('SIGTERM')).code).toBe(0);
  });
});
