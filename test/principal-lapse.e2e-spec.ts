import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { cliRunsTimeout, createKey, runCli } from './support/cli.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';

/**
 * A per-principal server's process holds its principal's secret. When the principal's key is
 * revoked (or its rotation's overlap ends) and no session of that name is left, the process
 * is closed then, not ten minutes later by the idle reaper; a name with a session still open
 * (another of its sessions, a rotated key's successor) keeps its process.
 */

afterAll(stopAllDaemons);

interface Stats {
  pid: number;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("a lapsed key's own upstream process", () => {
  let daemon: DaemonHandle;
  let configPath: string;
  let dataDir: string;
  const clients: Client[] = [];

  const cli = (...args: string[]) => runCli([...args, '--config', configPath]);
  const withSecret = (name: string): string => {
    const key = createKey(configPath, name, 'dev');
    const set = runCli(['secrets', 'set', '--config', configPath, '--principal', name, 'FIXTURE_TOKEN'], { input: `${name}-token\n` });
    expect(set.code, set.stderr).toBe(0);
    return key;
  };
  const connect = async (key: string): Promise<{ client: Client; session: string }> => {
    const client = new Client({ name: 'e2e-principal-lapse', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { 'X-API-Key': key } } });
    await client.connect(transport);
    clients.push(client);
    return { client, session: transport.sessionId! };
  };
  const pidOf = async (client: Client): Promise<number> => {
    const result = await client.callTool({ name: 'own__stats', arguments: {} });
    return (JSON.parse(String((result.content as { text: string }[])[0]!.text)) as Stats).pid;
  };
  const sessionEnded = (session: string) =>
    eventually(() => (auditRows(dataDir, `method = 'session' AND name = 'ended' AND session_id = ?`, session).length > 0 || undefined), 30_000, `session ${session} to end`);

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    configPath = writeConfig(
      { log: { level: 'info' }, auth: { mode: 'required' }, policy: { defaultEffect: 'allow' }, mcpServers: { own: stdioFixture({ FIXTURE_TOKEN: '${secret:FIXTURE_TOKEN}' }, { isolation: 'per-principal' }) } },
      dir,
    );
    daemon = await startDaemon(configPath);
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
  });

  it('a revoked key: its process is closed once its last session has ended; another principal keeps theirs', { timeout: cliRunsTimeout(6) + 60_000 }, async () => {
    const piaKey = withSecret('pia');
    const quinnKey = withSecret('quinn');
    const [first, second] = [await connect(piaKey), await connect(piaKey)];
    const quinn = await connect(quinnKey);
    const piaPid = await pidOf(first.client);
    expect(await pidOf(second.client)).toBe(piaPid);
    const quinnPid = await pidOf(quinn.client);
    expect(quinnPid).not.toBe(piaPid);

    expect(cli('keys', 'revoke', 'pia').code).toBe(0);
    await sessionEnded(first.session);
    await sessionEnded(second.session);
    await eventually(() => !alive(piaPid) || undefined, 15_000, "pia's upstream process to exit");
    await daemon.waitForLog((line) => line.includes('closed its own upstream connections') && line.includes('pia'), 15_000, 'the log line');
    expect(alive(quinnPid)).toBe(true);
    expect(await pidOf(quinn.client)).toBe(quinnPid);
  });

  it("a rotated key: the old key's session ends with the overlap, the successor's session keeps the process", { timeout: cliRunsTimeout(3) + 60_000 }, async () => {
    const oldKey = withSecret('rex');
    const before = await connect(oldKey);
    const pid = await pidOf(before.client);
    const rotated = cli('keys', 'rotate', 'rex', '--overlap', '3s');
    expect(rotated.code, rotated.stderr).toBe(0);
    const after = await connect(rotated.stdout.trimEnd().split('\n').at(-1)!);
    expect(await pidOf(after.client)).toBe(pid);

    await sessionEnded(before.session);
    // The lapse is handled when the session ends: give the close (were it wrongly made) time to show.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(alive(pid)).toBe(true);
    expect(await pidOf(after.client)).toBe(pid);
  });
});
