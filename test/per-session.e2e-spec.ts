import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { eventually, isAlive, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';

type ToolResult = { content: { type: string; text?: string }[]; isError?: boolean };
type Capabilities = ConstructorParameters<typeof Client>[1] extends infer O ? (O extends { capabilities?: infer C } ? C : never) : never;

interface Host {
  client: Client;
  /** The questions the gateway relayed to this host, as `method:detail`. */
  asked: string[];
  /** Log lines it received. */
  logs: unknown[];
  /** URIs of the resources/updated notifications it received. */
  updates: string[];
  /** Ends the session (DELETE) and closes the client. */
  end(): Promise<void>;
}

/** A host declaring `capabilities` (speaking only `protocolVersion`, when given), answering what it declared as `who`. */
async function host(daemon: DaemonHandle, who: string, capabilities: Capabilities, protocolVersion?: string): Promise<Host> {
  const asked: string[] = [];
  const logs: unknown[] = [];
  const updates: string[] = [];
  const client = new Client({ name: `host-${who}`, version: '1.0.0' }, { capabilities, ...(protocolVersion && { supportedProtocolVersions: [protocolVersion] }) });
  // The SDK refuses a handler for a capability the client does not declare.
  if (capabilities?.sampling) {
    client.setRequestHandler('sampling/createMessage', async (request) => {
      asked.push(`sampling:${JSON.stringify(request.params.messages)}`);
      return { role: 'assistant', content: { type: 'text', text: `sampled by ${who}` }, model: `model-of-${who}` };
    });
  }
  if (capabilities?.elicitation) {
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(`elicitation:${String(request.params.message)}`);
      return { action: 'accept', content: { name: `name from ${who}` } };
    });
  }
  if (capabilities?.roots) {
    client.setRequestHandler('roots/list', async () => {
      asked.push('roots');
      return { roots: [{ uri: `file:///home/${who}`, name: who }] };
    });
  }
  client.setNotificationHandler('notifications/message', (n) => void logs.push(n.params));
  client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
  const transport = new StreamableHTTPClientTransport(new URL(daemon.mcpUrl));
  await client.connect(transport);
  return {
    client,
    asked,
    logs,
    updates,
    end: async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
    },
  };
}

const textOf = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');
const call = (h: Host, name: string, args: Record<string, unknown> = {}) => h.client.callTool({ name, arguments: args }).then(textOf);
const statsOf = async (h: Host, server: string) =>
  JSON.parse(await call(h, `${server}__stats`)) as { pid: number; rootsChanged: number; logLevel: string | null };
const pidOf = async (h: Host, server: string) => (await statsOf(h, server)).pid;
const rootsChanged = async (h: Host, server: string) => (await statsOf(h, server)).rootsChanged;

const PINNED = [{ uri: 'file:///srv/pinned', name: 'pinned' }];

afterAll(stopAllDaemons);

describe('isolation: per-session', () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  let configPath: string;
  let full: Host;
  let formOnly: Host;

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, 'everyone: [sampler]\nroles:\n  sampler:\n    - { id: sampling-ok, allow: sample, server: own }\n');
    configPath = writeConfig(
      {
        policy: { file: policyFile },
        // With the inbox on, every per-session connection also declares both elicitation
        // modes (the inbox takes what the host cannot); off, they follow the host alone.
        relay: { inbox: false },
        mcpServers: {
          own: stdioFixture({ FIXTURE_NAME: 'own' }, { isolation: 'per-session' }),
          pinned: stdioFixture({ FIXTURE_NAME: 'pinned' }, { isolation: 'per-session', roots: PINNED }),
        },
      },
      dir,
    );
    daemon = await startDaemon(configPath);
    // Both hosts are the same principal (loopback, no key): only the session tells them apart.
    full = await host(daemon, 'full', { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } });
    formOnly = await host(daemon, 'form', { elicitation: {} });
    await eventually(async () => {
      const names = (await full.client.listTools()).tools.map((t) => t.name);
      return names.includes('own__counter') && names.includes('pinned__list_roots');
    }, 15_000, 'both per-session servers in the catalog (read by the registry connection)');
  });

  afterAll(async () => {
    await Promise.all([full, formOnly].map((h) => h?.end()));
  });

  it('runs each session on its own upstream process, and state does not leak between them', async () => {
    const [a, b] = [await pidOf(full, 'own'), await pidOf(formOnly, 'own')];
    expect(a).not.toBe(b);
    expect(await pidOf(full, 'own')).toBe(a);
    expect(await call(full, 'own__counter')).toBe('1');
    expect(await call(full, 'own__counter')).toBe('2');
    expect(await call(formOnly, 'own__counter')).toBe('1');
  });

  it("declares to each session's connection only what that session's host can answer", async () => {
    expect(JSON.parse(await call(full, 'own__client_capabilities'))).toEqual({
      sampling: {},
      elicitation: { form: {} },
      roots: { listChanged: true },
    });
    // elicitation: {} (before modes) is forms; no sampling, no roots.
    expect(JSON.parse(await call(formOnly, 'own__client_capabilities'))).toEqual({ elicitation: { form: {} } });
    // Pinned roots are declared whatever the host, since the gateway answers them.
    expect(JSON.parse(await call(formOnly, 'pinned__client_capabilities'))).toEqual({
      elicitation: { form: {} },
      roots: { listChanged: true },
    });
  });

  it("declares only what the host's revision has: a 2025-03-26 host's elicitation and sampling tools are not", async () => {
    const march = await host(daemon, 'march', { sampling: { tools: {} }, elicitation: { form: {} } }, '2025-03-26');
    try {
      expect(JSON.parse(await call(march, 'own__client_capabilities'))).toEqual({ sampling: {} });
    } finally {
      await march.end();
    }
  });

  it('relays sampling and elicitation to the owning session only, even when two sessions ask at once', async () => {
    const [a, b] = await Promise.all([
      call(full, 'own__ask_elicitation', { message: 'from-full' }),
      call(formOnly, 'own__ask_elicitation', { message: 'from-form' }),
    ]);
    expect(JSON.parse(a)).toEqual({ action: 'accept', content: { name: 'name from full' } });
    expect(JSON.parse(b)).toEqual({ action: 'accept', content: { name: 'name from form' } });
    expect(full.asked).toEqual(['elicitation:from-full']);
    expect(formOnly.asked).toEqual(['elicitation:from-form']);

    expect(await call(full, 'own__ask_sampling', { prompt: 'hello' })).toBe('sampled by full');
    expect(full.asked.at(-1)).toContain('hello');
    // The form-only host cannot sample (its connection did not declare it either): the
    // gateway refuses, and no other session is asked in its place.
    const refused = await formOnly.client.callTool({ name: 'own__ask_sampling', arguments: { prompt: 'nope' } });
    expect((refused as ToolResult).isError).toBe(true);
    expect(textOf(refused)).toContain('did not declare support for sampling/createMessage');
    expect(full.asked.some((q) => q.includes('nope'))).toBe(false);
    expect(formOnly.asked).toEqual(['elicitation:from-form']);
    const sampled = await eventually(() => auditRows(dataDir, "method = 'sampling/createMessage'")[0]);
    expect(sampled).toMatchObject({ upstream: 'own', decision: 'allowed', rule: 'sampling-ok', client_name: 'host-full' });
  });

  it("relays roots/list to the session's host, but answers pinned roots from the config without asking", async () => {
    expect(JSON.parse(await call(full, 'own__list_roots'))).toEqual([{ uri: 'file:///home/full', name: 'full' }]);
    expect(full.asked.filter((q) => q === 'roots')).toHaveLength(1);
    expect(JSON.parse(await call(full, 'pinned__list_roots'))).toEqual(PINNED);
    expect(JSON.parse(await call(formOnly, 'pinned__list_roots'))).toEqual(PINNED);
    expect(full.asked.filter((q) => q === 'roots')).toHaveLength(1);

    const rows = await eventually(() => {
      const found = auditRows(dataDir, "method = 'roots/list' AND upstream = 'pinned'");
      return found.length >= 2 ? found : undefined;
    });
    expect(rows[0]).toMatchObject({ decision: 'allowed', rule: 'relay:pinned-roots', outcome: 'ok', client_name: 'host-full' });
    expect(String(rows[0].arguments)).toContain('file:///srv/pinned');
  });

  it("passes a host's roots/list_changed to its own connections, but not to pinned ones nor to other sessions'", async () => {
    await full.client.sendRootsListChanged();
    await eventually(async () => (await rootsChanged(full, 'own')) === 1, 5_000, 'the notification at the session\'s own connection');
    expect(await rootsChanged(full, 'pinned')).toBe(0);
    expect(await rootsChanged(formOnly, 'own')).toBe(0);
  });

  it('sends a session connection\'s log lines to that session only', async () => {
    await call(full, 'own__log', { level: 'error', message: 'for full only' });
    await eventually(() => full.logs.some((l) => JSON.stringify(l).includes('for full only')), 5_000, 'the log line at its session');
    await call(formOnly, 'own__echo', { text: 'a round trip, after which a stray line would have arrived' });
    expect(formOnly.logs.some((l) => JSON.stringify(l).includes('for full only'))).toBe(false);
  });

  it("asks a session's own connection for that session's log level only", async () => {
    await formOnly.client.setLoggingLevel('warning');
    expect((await statsOf(formOnly, 'own')).logLevel).toBe('warning');
    expect((await statsOf(full, 'own')).logLevel).toBeNull();
  });

  it("subscribes each session on its own connection, and delivers updates only there", async () => {
    const hello = 'fixture://static/hello';
    await full.client.subscribeResource({ uri: hello });
    expect(await call(formOnly, 'own__touch_resource', { uri: hello })).toBe(`not subscribed: ${hello}`);
    expect(await call(full, 'own__touch_resource', { uri: hello })).toBe(`updated ${hello}`);
    await eventually(() => full.updates.length === 1, 5_000, 'the update at the subscribed session');

    await formOnly.client.subscribeResource({ uri: hello });
    expect(await call(formOnly, 'own__touch_resource', { uri: hello })).toBe(`updated ${hello}`);
    await eventually(() => formOnly.updates.length === 1, 5_000, "the update at the other session's own subscription");
    await full.client.unsubscribeResource({ uri: hello });
    expect(await call(full, 'own__touch_resource', { uri: hello })).toBe(`not subscribed: ${hello}`);
    expect(await call(formOnly, 'own__touch_resource', { uri: hello })).toBe(`updated ${hello}`);
    await eventually(() => formOnly.updates.length === 2, 5_000, 'the second update');
    expect(full.updates).toEqual([hello]);
  });

  it('changes pinned roots on a reload without restarting the server, which is told', async () => {
    const before = await pidOf(full, 'pinned');
    const config = JSON.parse(readFileSync(configPath, 'utf8'));
    const moved = [{ uri: 'file:///srv/moved' }];
    config.mcpServers.pinned.roots = moved;
    writeFileSync(configPath, JSON.stringify(config, null, 2));
    await eventually(async () => (await call(full, 'pinned__list_roots')) === JSON.stringify(moved), 10_000, 'the new pinned roots');
    expect(await pidOf(full, 'pinned')).toBe(before);
    await eventually(async () => (await rootsChanged(full, 'pinned')) === 1, 5_000, 'notifications/roots/list_changed at the pinned server');
  });

  it("closes a session's upstream processes when the session ends", async () => {
    const h = await host(daemon, 'short', {});
    const own = await pidOf(h, 'own');
    const pinned = await pidOf(h, 'pinned');
    expect(isAlive(own) && isAlive(pinned)).toBe(true);
    await h.end();
    await eventually(() => !isAlive(own) && !isAlive(pinned), 10_000, "the session's upstream processes to exit");
    // The other sessions' processes are untouched.
    expect(isAlive(await pidOf(full, 'own'))).toBe(true);
  });
});

describe('a shared server: the level it is asked for follows the sessions that join and leave', () => {
  let daemon: DaemonHandle;

  beforeAll(async () => {
    daemon = await startDaemon({ mcpServers: { fx: stdioFixture() } });
  });

  it('a new session (info by default) is not silenced by a quieter one, and a debug session that leaves takes its level along', async () => {
    const quiet = await host(daemon, 'quiet', {});
    await eventually(async () => (await quiet.client.listTools()).tools.some((t) => t.name === 'fx__log'), 15_000, 'fx__log listed');
    await quiet.client.setLoggingLevel('error');
    expect((await statsOf(quiet, 'fx')).logLevel).toBe('error');

    // Its initialize is answered once the upstream has the level the new session wants.
    const fresh = await host(daemon, 'fresh', {});
    expect((await statsOf(fresh, 'fx')).logLevel).toBe('info');
    expect(await call(fresh, 'fx__log', { level: 'warning', message: 'for the default threshold' })).toBe('logged at warning');
    await eventually(() => fresh.logs.some((l) => JSON.stringify(l).includes('for the default threshold')), 5_000, 'the warning at the new session');

    const chatty = await host(daemon, 'chatty', {});
    await chatty.client.setLoggingLevel('debug');
    expect((await statsOf(quiet, 'fx')).logLevel).toBe('debug');
    await chatty.end();
    await eventually(async () => (await statsOf(quiet, 'fx')).logLevel === 'info', 5_000, 'the upstream back at info once the debug session left');
    await fresh.end();
    await eventually(async () => (await statsOf(quiet, 'fx')).logLevel === 'error', 5_000, 'the upstream at error once only the error session is left');
    await quiet.end();
  });
});
