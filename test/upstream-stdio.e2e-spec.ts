import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { fixturePath } from '@switchboard/testing';
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
  await Promise.all(moreHosts.map((h) => h.close()));
  await stopAllDaemons();
});
const moreHosts: Host[] = [];

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

  it("that cannot be started says where it was looked for: a relative command without cwd, in the daemon's directory, named", async () => {
    const lost = await startDaemon({ mcpServers: { lost: { command: './no-such-server', args: [] } } });
    const upstream = await eventually(async () => {
      const body = (await (await fetch(`${lost.baseUrl}/readyz`)).json()) as { upstreams: { state: string; lastError?: string }[] };
      return body.upstreams[0]?.lastError ? body.upstreams[0] : undefined;
    });
    expect(upstream.state).toBe('down');
    // The test runner's directory is the one the daemon was started in.
    expect(upstream.lastError).toContain(`cannot start command "./no-such-server": not found relative to ${process.cwd()}, the daemon's working directory`);
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

/**
 * sh starts a `sleep` in the background, in its own process group, then becomes the fixture
 * server (exec): the group's id is the server's pid, which its stats tool reports.
 */
const WITH_BACKGROUND_CHILD = {
  command: '/bin/sh',
  args: ['-c', `sleep 3021 & exec "${process.execPath}" "${fixturePath('stdio')}"`],
  env: {},
};

/** The commands of a process group's members (ps, since nothing else lists them). */
const groupMembers = (pgid: number): string[] =>
  execFileSync('ps', ['-e', '-o', 'pgid=,comm='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([group]) => Number(group) === pgid)
    .map(([, command]) => command);

async function serverPid(client: Client): Promise<number> {
  const result = await client.callTool({ name: 'h1__stats', arguments: {} });
  return (JSON.parse((result.content as { text: string }[])[0].text) as { pid: number }).pid;
}

describe("what a stdio upstream starts (its process group)", () => {
  it('is stopped when the upstream crashes, not left to PID 1', async () => {
    const crashing = await startDaemon({ mcpServers: { h1: WITH_BACKGROUND_CHILD } });
    const h = await connectHost('streamable-http', { daemon: crashing });
    moreHosts.push(h);
    const pgid = await serverPid(h.client);
    expect(groupMembers(pgid)).toContain('sleep');
    await h.client.callTool({ name: 'h1__crash', arguments: {} }, { timeout: 30_000 }).catch(() => undefined);
    await eventually(() => groupMembers(pgid).length === 0, 15_000, 'the crashed server\'s sleep to be stopped');
    // The restarted one has its own group, and its own sleep.
    const next = await eventually(() => serverPid(h.client).catch(() => undefined), 30_000, 'the upstream to be restarted');
    expect(groupMembers(next)).toContain('sleep');
  });

  it('is stopped with the daemon (SIGTERM)', async () => {
    const stopping = await startDaemon({ mcpServers: { h1: WITH_BACKGROUND_CHILD } });
    const h = await connectHost('streamable-http', { daemon: stopping });
    const pgid = await serverPid(h.client);
    expect(groupMembers(pgid)).toContain('sleep');
    await h.close();
    expect(await stopping.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(groupMembers(pgid)).toEqual([]);
  });
});

describe("a stdio upstream's stderr in the daemon log", () => {
  it('is redacted like the audit log: keys, bearer tokens and passwords never reach it', async () => {
    const secrets = ['sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx', 'eyPretendBearer123456', 'hunter2top'];
    const leaky = await startDaemon({
      log: { level: 'info' },
      mcpServers: {
        leaky: {
          command: '/bin/sh',
          args: [
            '-c',
            `echo "key ${secrets[0]}" >&2; echo "Authorization: Bearer ${secrets[1]}" >&2; ` +
              `echo 'called with {"password":"${secrets[2]}"}' >&2; exec "${process.execPath}" "${fixturePath('stdio')}"`,
          ],
          env: {},
        },
      },
    });
    const logged = () =>
      leaky
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { upstream?: string; stderr?: string })
        .filter((e) => e.upstream === 'leaky' && e.stderr !== undefined)
        .map((e) => e.stderr!);
    // The fixture's own line comes after the three: all of them are in the log by then.
    await eventually(() => logged().some((l) => l.includes('serving on stdio')), 15_000, 'the stderr lines');
    expect(logged().slice(0, 3)).toEqual([
      'key [REDACTED:anthropic-key]',
      'Authorization: Bearer [REDACTED:authorization]',
      'called with {"password":"[REDACTED:secret-param]"}',
    ]);
    for (const secret of secrets) expect(leaky.stderr()).not.toContain(secret);
  });
});
