import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { createKey, runCli } from './support/cli.js';

type ToolResult = { content: { type: string; text?: string }[]; isError?: boolean };

afterAll(stopAllDaemons);

describe('isolation: per-principal, with per-principal secrets', () => {
  let daemon: DaemonHandle;
  let configPath: string;
  let dataDir: string;
  const keys: Record<string, string> = {};
  const clients: Client[] = [];

  const setSecret = (principal: string, value: string, name = 'FIXTURE_TOKEN') => {
    const r = runCli(['secrets', 'set', '--config', configPath, '--principal', principal, name], { input: `${value}\n` });
    expect(r.code, r.stderr).toBe(0);
  };

  async function connect(name: string): Promise<Client> {
    const client = new Client({ name: `e2e-${name}`, version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${keys[name]}` } } }),
    );
    clients.push(client);
    return client;
  }

  const tokenSeenBy = async (client: Client) => {
    const result = (await client.callTool({ name: 'own__env', arguments: { name: 'FIXTURE_TOKEN' } })) as ToolResult;
    return result.content[0].text;
  };

  const toolNames = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    configPath = writeConfig(
      {
        auth: { mode: 'required' }, policy: { defaultEffect: 'allow' },
        mcpServers: {
          own: stdioFixture({ FIXTURE_TOKEN: '${secret:FIXTURE_TOKEN}', FIXTURE_NAME: 'own' }, { isolation: 'per-principal' }),
          pair: stdioFixture({ FIXTURE_TOKEN: '${secret:FIXTURE_TOKEN}', SECOND: '${secret:SECOND_TOKEN}' }, { isolation: 'per-principal' }),
          shared: stdioFixture({ FIXTURE_NAME: 'shared' }),
        },
      },
      dir,
    );
    for (const name of ['alice', 'bob', 'carol']) {
      keys[name] = createKey(configPath, name);
    }
    setSecret('alice', 'alpha-token');
    setSecret('bob', 'bravo-token');
    setSecret('alice', 'alpha-second', 'SECOND_TOKEN');
    daemon = await startDaemon(configPath);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  });

  it("runs each principal's calls on their own connection, with their own secret, even when interleaved", async () => {
    const [alice, bob] = [await connect('alice'), await connect('bob')];
    await eventually(async () => (await toolNames(alice)).includes('own__env'), 15_000, 'the per-principal server in the catalog');
    const calls: [string, Client][] = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? ['alice', alice] : ['bob', bob]));
    const seen = await Promise.all(calls.map(async ([who, client]) => [who, await tokenSeenBy(client)]));
    for (const [who, token] of seen) expect(token).toBe(who === 'alice' ? 'alpha-token' : 'bravo-token');
    // A shared server is one process for everyone, and never sees a secret.
    const shared = (await alice.callTool({ name: 'shared__env', arguments: { name: 'FIXTURE_TOKEN' } })) as ToolResult;
    expect(shared.content[0].text).toBe('');
  });

  it("hides the server from a principal without the secret, and says which one a direct call lacks", async () => {
    const carol = await connect('carol');
    const names = await toolNames(carol);
    expect(names).toContain('shared__echo');
    expect(names.some((n) => n.startsWith('own__'))).toBe(false);
    const error = await carol.callTool({ name: 'own__env', arguments: { name: 'FIXTURE_TOKEN' } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -32010 });
    expect(String((error as Error).message)).toContain(
      "Upstream 'own' needs your secret FIXTURE_TOKEN; an administrator sets it with: switchboard secrets set --principal carol FIXTURE_TOKEN < FILE",
    );
    expect(String((error as Error).message)).not.toMatch(/alpha|bravo/);
    // Every secret missing is named, each with its own command.
    await eventually(async () => (await toolNames(await connect('alice'))).includes('pair__env'), 15_000, 'the server that needs two secrets');
    const both = await carol.callTool({ name: 'pair__env', arguments: { name: 'SECOND' } }).catch((e: unknown) => e);
    expect(both).toMatchObject({ code: -32010 });
    expect(String((both as Error).message)).toContain(
      "Upstream 'pair' needs your secrets FIXTURE_TOKEN, SECOND_TOKEN; an administrator sets them with: " +
        'switchboard secrets set --principal carol FIXTURE_TOKEN < FILE; switchboard secrets set --principal carol SECOND_TOKEN < FILE',
    );
  });

  it('takes a secret set or rotated while running, without a restart', async () => {
    const carol = await connect('carol');
    setSecret('carol', 'charlie-token');
    await eventually(async () => (await toolNames(carol)).includes('own__env'), 10_000, "carol's list to show the server");
    expect(await tokenSeenBy(carol)).toBe('charlie-token');

    const alice = await connect('alice');
    setSecret('alice', 'alpha-rotated');
    await eventually(async () => (await tokenSeenBy(alice)) === 'alpha-rotated', 10_000, "alice's rotated token in use");
    expect(await tokenSeenBy(await connect('bob'))).toBe('bravo-token');
  });

  it('records each call under its principal, and no secret value in the log', async () => {
    const rows = await eventually(() => {
      const found = auditRows(dataDir).filter((r) => r.upstream === 'own' && r.outcome === 'ok');
      return found.some((r) => r.principal === 'carol') ? found : undefined;
    });
    expect(new Set(rows.map((r) => r.principal))).toEqual(new Set(['alice', 'bob', 'carol']));
    const denied = auditRows(dataDir).find((r) => r.principal === 'carol' && r.upstream === 'own' && r.outcome === 'error');
    expect(denied).toMatchObject({ error_code: -32010 });
    const everything = JSON.stringify(auditRows(dataDir));
    for (const value of ['alpha-token', 'bravo-token', 'charlie-token', 'alpha-rotated']) expect(everything).not.toContain(value);
  });

  it("gives a shared server nobody's roots when several principals share it; a principal's own server gets theirs", async () => {
    const client = new Client({ name: 'e2e-alice-roots', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
    let asked = 0;
    client.setRequestHandler('roots/list', async () => {
      asked += 1;
      return { roots: [{ uri: 'file:///home/alice', name: 'alice' }] };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${keys.alice}` } } }),
    );
    clients.push(client);
    const rootsVia = async (tool: string) => ((await client.callTool({ name: tool, arguments: {} })) as ToolResult).content[0].text;
    expect(JSON.parse((await rootsVia('shared__list_roots'))!)).toEqual([]);
    expect(asked).toBe(0);
    expect(JSON.parse((await rootsVia('own__list_roots'))!)).toEqual([{ uri: 'file:///home/alice', name: 'alice' }]);
    expect(asked).toBe(1);
    await eventually(async () => auditRows(dataDir).some((r) => r.method === 'roots/list' && r.upstream === 'shared' && r.rule === 'relay:shared-no-roots'));
  });

  it('lists secrets by name only', () => {
    const listed = runCli(['secrets', 'list', '--config', configPath]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/alice\s+FIXTURE_TOKEN/);
    expect(listed.stdout).not.toMatch(/alpha|bravo|charlie/);
  });
});

describe('a per-principal server nobody has secrets for', () => {
  it('is not started, and the daemon says what it waits for', async () => {
    const dir = tempDir();
    const daemon = await startDaemon(
      writeConfig(
        {
          log: { level: 'info' },
          mcpServers: {
            own: stdioFixture({ FIXTURE_TOKEN: '${secret:FIXTURE_TOKEN}' }, { isolation: 'per-principal' }),
            shared: stdioFixture(),
          },
        },
        dir,
      ),
    );
    const client = new Client({ name: 'e2e-nobody', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl)));
    try {
      await eventually(async () => (await client.listTools()).tools.some((t) => t.name === 'shared__echo'));
      expect((await client.listTools()).tools.some((t) => t.name.startsWith('own__'))).toBe(false);
      await daemon.waitForLog((line) => line.includes("no principal has the secrets FIXTURE_TOKEN yet, so 'own' is not started"));
    } finally {
      await client.close();
    }
  });

  it('is on /readyz as waiting-for-secrets without making it 503, and shows whose connections are up once a secret is set', async () => {
    const dir = tempDir();
    const configPath = writeConfig(
      {
        mcpServers: {
          own: stdioFixture({ FIXTURE_TOKEN: '${secret:FIXTURE_TOKEN}' }, { isolation: 'per-principal' }),
          shared: stdioFixture(),
        },
      },
      dir,
    );
    const daemon = await startDaemon(configPath);
    type Upstream = { name: string; state: string; isolation: string; connected?: number; missingSecrets?: string[] };
    const readyz = async () => {
      const res = await fetch(`${daemon.baseUrl}/readyz`);
      const body = (await res.json()) as { upstreams: Upstream[] };
      return { status: res.status, byName: Object.fromEntries(body.upstreams.map((u) => [u.name, u])) };
    };
    const waiting = await eventually(async () => {
      const r = await readyz();
      return r.byName.shared?.state === 'ready' ? r : undefined;
    });
    expect(waiting.status).toBe(200);
    expect(waiting.byName.own).toMatchObject({ state: 'waiting-for-secrets', isolation: 'per-principal', connected: 0, missingSecrets: ['FIXTURE_TOKEN'] });
    expect(waiting.byName.shared).toMatchObject({ state: 'ready', isolation: 'shared' });
    expect(waiting.byName.shared).not.toHaveProperty('connected');

    const set = runCli(['secrets', 'set', '--config', configPath, '--principal', 'loopback:anonymous', 'FIXTURE_TOKEN'], { input: 'a-token\n' });
    expect(set.code, set.stderr).toBe(0);
    const started = await eventually(async () => {
      const r = await readyz();
      return r.byName.own?.state === 'ready' ? r : undefined;
    }, 15_000, "the server started with the principal's secret");
    expect(started.status).toBe(200);
    expect(started.byName.own).toMatchObject({ isolation: 'per-principal', connected: 0 });
    expect(started.byName.own).not.toHaveProperty('missingSecrets');

    const client = new Client({ name: 'e2e-anonymous', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl)));
    try {
      const result = (await client.callTool({ name: 'own__env', arguments: { name: 'FIXTURE_TOKEN' } })) as ToolResult;
      expect(result.content[0].text).toBe('a-token');
      expect((await readyz()).byName.own).toMatchObject({ state: 'ready', connected: 1 });
    } finally {
      await client.close();
    }
  });
});
