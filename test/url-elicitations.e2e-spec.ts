import { dirname } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from './support/cli.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';

afterAll(stopAllDaemons);

/**
 * URL elicitations (2025-11-25): an upstream's -32042 lists elicitation ids it chose, and its
 * later notifications/elicitation/complete names one. On an isolated server each owner has a
 * connection (a process) of their own, whose ids may be the same as another's.
 */
describe('URL elicitation completions on isolated servers', () => {
  let daemon: DaemonHandle;
  const keys: Record<string, string> = {};
  const clients: Client[] = [];

  /** A host of the key `name` that takes URL elicitations and records the completions it hears. */
  async function host(name: string): Promise<{ client: Client; completed: unknown[] }> {
    const completed: unknown[] = [];
    const client = new Client({ name: `e2e-${name}`, version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    client.setNotificationHandler('notifications/elicitation/complete', (n: { params?: { elicitationId?: string } }) => {
      completed.push(n.params?.elicitationId);
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${keys[name]}` } } }),
    );
    clients.push(client);
    return { client, completed };
  }

  const required = (client: Client, tool: string, elicitationId: string) =>
    client.callTool({ name: tool, arguments: { elicitationId } }).then(
      () => undefined,
      (e: { code?: number }) => e.code,
    );

  beforeAll(async () => {
    const dir = tempDir();
    const configPath = writeConfig(
      {
        auth: { mode: 'required' }, policy: { defaultEffect: 'allow' },
        mcpServers: {
          mine: stdioFixture({ FIXTURE_NAME: 'mine' }, { isolation: 'per-principal' }),
          own: stdioFixture({ FIXTURE_NAME: 'own' }, { isolation: 'per-session' }),
        },
      },
      dir,
    );
    for (const name of ['alice', 'bob']) keys[name] = createKey(configPath, name);
    daemon = await startDaemon(configPath);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  });

  for (const [server, isolation, second] of [
    ['mine', 'per-principal', 'bob'],
    ['own', 'per-session', 'alice'],
  ] as const) {
    it(`tells only the host whose ${isolation} connection sent a completion, when another connection's upstream chose the same id`, async () => {
      const first = await host('alice');
      const other = await host(second);
      await eventually(async () => (await first.client.listTools()).tools.some((t) => t.name === `${server}__require_url_elicitation`));
      // Each connection's upstream names its elicitation '1'; the other host was told of its own last.
      expect(await required(first.client, `${server}__require_url_elicitation`, '1')).toBe(-32042);
      expect(await required(other.client, `${server}__require_url_elicitation`, '1')).toBe(-32042);

      await first.client.callTool({ name: `${server}__complete_url_elicitation`, arguments: { elicitationId: '1' } });
      await eventually(() => first.completed.length > 0, 15_000, "the first host's completion");
      await other.client.callTool({ name: `${server}__complete_url_elicitation`, arguments: { elicitationId: '1' } });
      await eventually(() => other.completed.length > 0, 15_000, "the other host's completion");
      // Each heard its own once: the first one's never reached the other host.
      expect([first.completed, other.completed]).toEqual([['1'], ['1']]);
    });
  }
});

/**
 * A config change retires a per-session connection while a call on it is still running: the
 * old connection finishes the call, and what it says goes on being tagged with the session
 * it belongs to, as do the new connection's.
 */
describe('URL elicitations on a per-session connection a reload retired', () => {
  let daemon: DaemonHandle;
  let configPath: string;
  let client: Client | undefined;
  const config = (mark: string) => ({
    auth: { mode: 'required' }, policy: { defaultEffect: 'allow' },
    log: { level: 'info' },
    mcpServers: { own: stdioFixture({ FIXTURE_NAME: 'own', FIXTURE_MARK: mark }, { isolation: 'per-session' }) },
  });
  const reloads = () => daemon.stderr().split('\n').filter((line) => line.includes('"msg":"config reloaded"')).length;

  beforeAll(async () => {
    configPath = writeConfig(config('before'), tempDir());
    const key = createKey(configPath, 'alice');
    daemon = await startDaemon(configPath);
    client = new Client({ name: 'e2e-reload', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
    );
  });

  afterAll(async () => {
    await client?.close().catch(() => undefined);
  });

  it("relays the completion of a URL elicitation the host accepted from the retired connection", async () => {
    const completed: unknown[] = [];
    client!.setNotificationHandler('notifications/elicitation/complete', (n: { params?: { elicitationId?: string } }) => {
      completed.push(n.params?.elicitationId);
    });
    // The host answers only once the reload has retired the connection that asked.
    client!.setRequestHandler('elicitation/create', async () => {
      writeConfig(config('after'), dirname(configPath));
      await eventually(() => reloads() >= 1, 15_000, 'the reload');
      return { action: 'accept' };
    });
    await eventually(async () => (await client!.listTools()).tools.some((t) => t.name === 'own__ask_client'));
    const asked = await client!.callTool({
      name: 'own__ask_client',
      arguments: { method: 'elicitation/create', params: { mode: 'url', elicitationId: '1', url: 'https://auth.example.com/start', message: 'Sign in' } },
    });
    expect(JSON.parse(String((asked.content as { text: string }[])[0].text))).toEqual({ action: 'accept' });
    // The session's new connection (an upstream of the same session) names the elicitation
    // complete, once the restarted server's tools are listed again.
    const complete = () => client!.callTool({ name: 'own__complete_url_elicitation', arguments: { elicitationId: '1' } });
    await eventually(() => complete().then(() => true, () => false), 15_000, 'the completing call');
    await eventually(() => completed.length > 0, 15_000, 'the completion');
    expect(completed).toEqual(['1']);
  });
});
