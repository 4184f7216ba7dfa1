import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { connectHost, type Host } from './support/hosts.js';

/**
 * A stdio upstream runs with the env and cwd its config gives, and no more of the daemon's
 * environment than a minimal default; what it writes to stderr lands in the daemon's log,
 * labelled with the server.
 */
let daemon: DaemonHandle;
let host: Host;
let client: Client;
let configDir: string;

const text = async (name: string, args: Record<string, unknown> = {}) =>
  ((await client.callTool({ name, arguments: args })).content as { text: string }[])[0].text;

beforeAll(async () => {
  const dir = tempDir('sb-stdio-');
  mkdirSync(join(dir, 'work'));
  const file = writeConfig(
    {
      log: { level: 'info' },
      mcpServers: { fx: stdioFixture({ GREETING: 'hello from config' }, { cwd: './work' }) },
    },
    dir,
  );
  configDir = dirname(file);
  daemon = await startDaemon(file, [], { SWITCHBOARD_E2E_SECRET: 'must-not-leak' });
  host = await connectHost('streamable-http', { daemon });
  client = host.client;
});
afterAll(async () => {
  await host?.close();
  await stopAllDaemons();
});

describe('stdio upstream process', () => {
  it('gets the env from its config', async () => {
    expect(await text('fx__env', { name: 'GREETING' })).toBe('hello from config');
  });

  it("does not inherit the daemon's own environment", async () => {
    expect(await text('fx__env', { name: 'SWITCHBOARD_E2E_SECRET' })).toBe('');
    // The minimal default set is there (a PATH, so the server can find its tools).
    expect(await text('fx__env', { name: 'PATH' })).not.toBe('');
  });

  it('runs in its cwd, resolved against the config file', async () => {
    expect(realpathSync(await text('fx__cwd'))).toBe(realpathSync(join(configDir, 'work')));
  });

  it('has its stderr in the daemon log, labelled with the server', async () => {
    const entry = await eventually(() =>
      daemon
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { upstream?: string; stderr?: string })
        .find((e) => e.upstream === 'fx' && e.stderr?.includes('serving on stdio')),
    );
    expect(entry.stderr).toMatch(/fixture .*serving on stdio/);
  });
});
