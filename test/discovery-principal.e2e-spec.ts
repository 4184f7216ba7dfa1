import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fixturePath } from '@switchboard/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { createKey, runCli } from './support/cli.js';

type ToolResult = { content: { type: string; text?: string }[]; isError?: boolean };
type Upstream = { name: string; state: string; lastError?: string };

afterAll(stopAllDaemons);

/**
 * An upstream that refuses a bad token the way many do: it exits 1 on start. Any other
 * token runs the stdio fixture.
 */
const tokenChecking = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [
    '-e',
    `if (process.env.TOKEN === 'BAD') { process.stderr.write('token rejected\\n'); process.exit(1); } import(${JSON.stringify(fixturePath('stdio'))});`,
  ],
  env: { TOKEN: '${secret:TOKEN}' },
  isolation: 'per-principal',
  ...extra,
});

describe("a per-principal server's list-reading connection, when a principal's secrets fail", () => {
  const clients: Client[] = [];

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  });

  async function connect(daemon: DaemonHandle, key: string): Promise<Client> {
    const client = new Client({ name: 'e2e-discovery', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    clients.push(client);
    return client;
  }

  const setSecret = (configPath: string, principal: string, value: string) => {
    const r = runCli(['secrets', 'set', '--config', configPath, '--principal', principal, 'TOKEN'], { input: `${value}\n` });
    expect(r.code, r.stderr).toBe(0);
  };

  const tokenSeenBy = async (client: Client) => {
    const result = (await client.callTool({ name: 'tok__env', arguments: { name: 'TOKEN' } })) as ToolResult;
    return result.content[0].text;
  };

  it("tries the next principal's secrets, so one user's bad token does not take the server from the others", async () => {
    const dir = tempDir();
    const configPath = writeConfig({ auth: { mode: 'required' }, policy: { defaultEffect: 'allow' }, mcpServers: { tok: tokenChecking() } }, dir);
    const keys = { alice: createKey(configPath, 'alice'), bob: createKey(configPath, 'bob') };
    // alice sorts first, and her token is refused.
    setSecret(configPath, 'alice', 'BAD');
    setSecret(configPath, 'bob', 'GOOD');
    const daemon = await startDaemon(configPath);

    const bob = await connect(daemon, keys.bob);
    await eventually(async () => (await bob.listTools()).tools.some((t) => t.name === 'tok__env'), 15_000, "the server's tools, read with bob's secrets");
    expect(await tokenSeenBy(bob)).toBe('GOOD');
    const readyz = await fetch(`${daemon.baseUrl}/readyz`);
    expect(readyz.status).toBe(200);

    // One warning, naming whose secrets failed and whose are tried next; never a value.
    const warned = await daemon.waitForLog((line) => line.includes('alice') && line.includes('bob') && line.includes('"tok"'));
    expect(warned).not.toContain('BAD');
    expect(daemon.stderr()).not.toContain('GOOD');

    // alice's own connection fails, with the reason; it is hers alone.
    const alice = await connect(daemon, keys.alice);
    const refused = await alice.callTool({ name: 'tok__env', arguments: { name: 'TOKEN' } }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toMatchObject({ code: -32010 });
    expect((refused as Error).message).toMatch(/not available to you: .*exit/);

    // Fixed, her secret works, and bob's calls still do.
    setSecret(configPath, 'alice', 'FIXED');
    expect(await eventually(async () => ((await tokenSeenBy(alice).catch(() => undefined)) === 'FIXED' ? 'FIXED' : undefined), 15_000, "alice's fixed secret")).toBe('FIXED');
    expect(await tokenSeenBy(bob)).toBe('GOOD');
  });

  it('is down when every principal has failed, and /readyz says whose secrets were tried', async () => {
    const dir = tempDir();
    const configPath = writeConfig({ mcpServers: { tok: tokenChecking() } }, dir);
    setSecret(configPath, 'alice', 'BAD');
    setSecret(configPath, 'bob', 'BAD');
    const daemon = await startDaemon(configPath);
    const status = async () => {
      const res = await fetch(`${daemon.baseUrl}/readyz`);
      const body = (await res.json()) as { upstreams: Upstream[] };
      return { status: res.status, tok: body.upstreams.find((u) => u.name === 'tok')! };
    };
    const down = await eventually(async () => {
      const s = await status();
      return s.tok.state === 'down' && s.tok.lastError?.includes('bob') ? s : undefined;
    }, 15_000, 'the server down after both principals failed');
    expect(down.status).toBe(503);
    expect(down.tok.lastError).toMatch(/alice/);
    expect(down.tok.lastError).not.toContain('BAD');

    // A secret that changes is tried again.
    setSecret(configPath, 'bob', 'GOOD');
    await eventually(async () => ((await status()).tok.state === 'ready' ? true : undefined), 15_000, "the server up with bob's new secret");
  });
});
