import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client, ProtocolError } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { connectToFixture, LONG_TOOL_NAME } from '@switchboard/testing';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EVERYTHING_SERVER,
  eventually,
  REPO_ROOT,
  startDaemon,
  stdioFixture,
  stopAllDaemons,
  tempDir,
  writeConfig,
  type DaemonHandle,
} from './support/daemon.js';
import { connectHost, type Host } from './support/hosts.js';

/**
 * How the gateway merges its upstreams, seen by a real SDK host through the real daemon:
 * pagination with the gateway's own cursors over upstreams that paginate themselves, the
 * three namespace modes with per-server overrides and aliases, the 64-character limit,
 * resource URI collisions, the capability union, the public reference server, and dead
 * upstreams that must not hold the others back.
 */

type Item = Record<string, unknown>;
type ListMethod = 'tools/list' | 'resources/list' | 'prompts/list' | 'resources/templates/list';
const KEY: Record<ListMethod, string> = {
  'tools/list': 'tools',
  'resources/list': 'resources',
  'prompts/list': 'prompts',
  'resources/templates/list': 'resourceTemplates',
};
const ID: Record<ListMethod, string> = {
  'tools/list': 'name',
  'resources/list': 'uri',
  'prompts/list': 'name',
  'resources/templates/list': 'uriTemplate',
};

interface Walk {
  pages: Item[][];
  cursors: string[];
  ids: string[];
  raw: string;
}

/** Walks a list page by page with the cursors the gateway hands out (no SDK aggregation). */
async function walk(host: Host, method: ListMethod): Promise<Walk> {
  const out: Walk = { pages: [], cursors: [], ids: [], raw: '' };
  let cursor: string | undefined;
  for (let n = 0; n < 100; n++) {
    const result = (await host.client.request({ method, params: cursor === undefined ? {} : { cursor } })) as Item;
    out.raw += JSON.stringify(result);
    const items = result[KEY[method]] as Item[];
    out.pages.push(items);
    out.ids.push(...items.map((i) => String(i[ID[method]])));
    if (typeof result.nextCursor !== 'string') return out;
    cursor = result.nextCursor;
    out.cursors.push(cursor);
  }
  throw new Error(`${method}: more than 100 pages`);
}

async function callText(host: Host, name: string, args: Item = {}): Promise<string> {
  const result = await host.client.callTool({ name, arguments: args });
  const block = (result.content as Item[])[0];
  return String(block?.text);
}

async function statsOf(host: Host, tool: string): Promise<{ name: string; pid: number; calls: number }> {
  return JSON.parse(await callText(host, tool)) as { name: string; pid: number; calls: number };
}

async function toolNames(host: Host): Promise<string[]> {
  return (await walk(host, 'tools/list')).ids;
}

async function errorCode(promise: Promise<unknown>): Promise<number | undefined> {
  try {
    await promise;
  } catch (err) {
    return err instanceof ProtocolError ? err.code : undefined;
  }
  throw new Error('expected the request to fail');
}

/** `eventually` for checks that answer `false` until they have a value. */
const until = <T>(check: () => Promise<T | false>, timeoutMs?: number, what?: string) =>
  eventually(check, timeoutMs, what) as Promise<T>;

const pad = (n: number) => String(n).padStart(3, '0');
const range = (n: number) => Array.from({ length: n }, (_, i) => pad(i));

/** The fixture's cursor format (libs/testing paginate.ts): base64url("<method>@<offset>"). */
const upstreamCursor = (method: string, offset: number) => Buffer.from(`${method}@${offset}`, 'utf8').toString('base64url');

/** What a fixture offers before any FIXTURE_EXTRA_*: read straight from a fixture, not hard-coded. */
let base: { tools: string[]; resources: string[]; prompts: string[]; templates: string[]; caps: Item };

beforeAll(async () => {
  const fx = await connectToFixture('stdio');
  try {
    base = {
      tools: (await fx.client.listTools()).tools.map((t) => t.name),
      resources: (await fx.client.listResources()).resources.map((r) => r.uri),
      prompts: (await fx.client.listPrompts()).prompts.map((p) => p.name),
      templates: (await fx.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
      caps: fx.client.getServerCapabilities() as Item,
    };
  } finally {
    await fx.close();
  }
});
afterAll(async () => {
  await stopAllDaemons();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Config and data of every daemon here live in directories removed at the end. */
const dirs: string[] = [];
function start(config: Item): Promise<DaemonHandle> {
  const dir = tempDir('sb-merge-');
  dirs.push(dir);
  return startDaemon(writeConfig(config, dir));
}

describe('pagination across upstreams that paginate themselves', () => {
  const SHAPES = {
    a: { tools: 120, resources: 60, prompts: 40 },
    b: { tools: 80, resources: 40, prompts: 30 },
    c: { tools: 40, resources: 20, prompts: 20 },
  } as const;
  const PAGE = 50;
  let daemon: DaemonHandle;
  let host: Host;

  const expected = {
    tools: () =>
      Object.entries(SHAPES).flatMap(([s, shape]) =>
        [...base.tools, ...range(shape.tools).map((n) => `extra_${n}`)].map((t) => `${s}__${t}`),
      ),
    prompts: () =>
      Object.entries(SHAPES).flatMap(([s, shape]) =>
        [...base.prompts, ...range(shape.prompts).map((n) => `extra_prompt_${n}`)].map((p) => `${s}__${p}`),
      ),
    // The first server (config order) keeps every URI; the others list the same URIs, rewritten.
    resources: () =>
      Object.entries(SHAPES).flatMap(([s, shape]) =>
        [...base.resources, ...range(shape.resources).map((n) => `fixture://extra/${n}`)].map((u) =>
          s === 'a' ? u : `switchboard://${s}/${u}`,
        ),
      ),
    templates: () => Object.keys(SHAPES).flatMap((s) => base.templates.map((t) => (s === 'a' ? t : `switchboard://${s}/${t}`))),
  };

  beforeAll(async () => {
    const servers = Object.fromEntries(
      Object.entries(SHAPES).map(([s, shape]) => [
        s,
        stdioFixture({
          FIXTURE_NAME: `fixture-${s}`,
          FIXTURE_EXTRA_TOOLS: String(shape.tools),
          FIXTURE_EXTRA_RESOURCES: String(shape.resources),
          FIXTURE_EXTRA_PROMPTS: String(shape.prompts),
          FIXTURE_PAGE_SIZE: '7',
        }),
      ]),
    );
    daemon = await start({ pageSize: PAGE, mcpServers: servers });
    host = await connectHost('streamable-http', { daemon });
  });
  afterAll(async () => {
    await host?.close();
    await daemon?.stop();
  });

  const upstreamCursors = (method: string) => Array.from({ length: 200 }, (_, i) => upstreamCursor(method, i + 1));

  const cases: [ListMethod, () => string[]][] = [
    ['tools/list', () => expected.tools()],
    ['resources/list', () => expected.resources()],
    ['prompts/list', () => expected.prompts()],
    ['resources/templates/list', () => expected.templates()],
  ];

  for (const [method, want] of cases) {
    it(`${method}: every item exactly once, pages of at most ${PAGE}, deterministic, gateway cursors only`, async () => {
      const first = await walk(host, method);
      expect(first.ids.length).toBe(new Set(first.ids).size);
      expect([...first.ids].sort()).toEqual([...want()].sort());
      for (const page of first.pages) expect(page.length).toBeLessThanOrEqual(PAGE);
      // Full pages until the last one: the gateway fills a page across upstream boundaries.
      for (const page of first.pages.slice(0, -1)) expect(page.length).toBe(PAGE);
      expect(first.pages.length).toBe(Math.max(1, Math.ceil(want().length / PAGE)));

      // Deterministic: a second walk, and a walk from another session, see the same pages.
      const second = await walk(host, method);
      expect(second.pages).toEqual(first.pages);
      expect(second.cursors).toEqual(first.cursors);
      const other = await connectHost('streamable-http', { daemon });
      try {
        expect((await walk(other, method)).pages).toEqual(first.pages);
      } finally {
        await other.close();
      }

      // No upstream cursor ever reaches the host, not even inside a gateway cursor.
      for (const upstream of upstreamCursors(method)) {
        expect(first.raw).not.toContain(upstream);
        for (const c of first.cursors) expect(c).not.toContain(upstream);
      }
    });
  }

  it('an upstream cursor fed to the gateway is -32602, as is a gateway cursor of another list', async () => {
    for (const method of Object.keys(KEY) as ListMethod[]) {
      expect(await errorCode(host.client.request({ method, params: { cursor: upstreamCursor(method, 7) } }))).toBe(-32602);
    }
    const toolsCursor = (await walk(host, 'tools/list')).cursors[0];
    expect(await errorCode(host.client.request({ method: 'prompts/list', params: { cursor: toolsCursor } }))).toBe(-32602);
  });

  it('namespace prefix (the default): <server>__<name>, each reaching its own upstream', async () => {
    const names = await toolNames(host);
    expect(names).not.toContain('echo');
    for (const s of Object.keys(SHAPES)) {
      expect((await statsOf(host, `${s}__stats`)).name).toBe(`fixture-${s}`);
      expect(await callText(host, `${s}__echo`, { text: `hi ${s}` })).toBe(`hi ${s}`);
    }
    expect(await callText(host, 'c__extra_039')).toBe('extra_039');
    // c has only 40 extra tools: 040 and up exist only on a and b.
    expect(names).not.toContain('c__extra_040');
    expect(await errorCode(host.client.callTool({ name: 'c__extra_040', arguments: {} }))).toBe(-32602);
  });

  it('a resource URI listed by two servers: the first keeps it, the later one is rewritten; reads and updates route', async () => {
    const hello = 'fixture://static/hello';
    const read = async (uri: string) => {
      const result = await host.client.readResource({ uri });
      return result.contents.map((c) => ({ uri: c.uri, text: (c as { text?: string }).text }));
    };
    expect(await read(hello)).toEqual([{ uri: hello, text: 'Hello from fixture-a' }]);
    for (const s of ['b', 'c']) {
      const uri = `switchboard://${s}/${hello}`;
      // The read result names the URI the host asked for, not the upstream's own one.
      expect(await read(uri)).toEqual([{ uri, text: `Hello from fixture-${s}` }]);
    }
    // Templates of a later server route too: the rewritten template expands to a rewritten URI.
    expect(await read('switchboard://c/fixture://items/10')).toEqual([{ uri: 'switchboard://c/fixture://items/10', text: 'item 10' }]);

    const rewritten = `switchboard://b/${hello}`;
    await host.client.subscribeResource({ uri: rewritten });
    expect(await callText(host, 'b__touch_resource', { uri: hello })).toBe(`updated ${hello}`);
    const updates = await eventually(
      () => host.notifications.get('notifications/resources/updated'),
      10_000,
      'resources/updated',
    );
    expect(updates).toEqual([{ uri: rewritten }]);
    // a's hello was never subscribed through the gateway: a has no upstream subscription.
    expect(await callText(host, 'a__touch_resource', { uri: hello })).toBe(`not subscribed: ${hello}`);
    await host.client.unsubscribeResource({ uri: rewritten });
    expect(await callText(host, 'b__touch_resource', { uri: hello })).toBe(`not subscribed: ${hello}`);
  });
});

describe('namespace: auto, with a per-server override and an alias', () => {
  let daemon: DaemonHandle;
  let host: Host;

  beforeAll(async () => {
    daemon = await start({
      namespace: 'auto',
      mcpServers: {
        a: stdioFixture({ FIXTURE_NAME: 'fixture-a' }),
        b: stdioFixture({ FIXTURE_NAME: 'fixture-b', FIXTURE_EXTRA_TOOLS: '2', FIXTURE_EXTRA_PROMPTS: '1' }),
        c: stdioFixture({ FIXTURE_NAME: 'fixture-c', FIXTURE_EXTRA_RESOURCES: '1' }, { alias: 'gamma', namespace: 'prefix' }),
      },
    });
    host = await connectHost('streamable-http', { daemon });
  });
  afterAll(async () => {
    await host?.close();
    await daemon?.stop();
  });

  it('prefixes exactly the names that collide; a name only one server has stays bare', async () => {
    const names = await toolNames(host);
    for (const t of base.tools) {
      expect(names).not.toContain(t);
      expect(names).toEqual(expect.arrayContaining([`a__${t}`, `b__${t}`, `gamma__${t}`]));
    }
    expect(names).toEqual(expect.arrayContaining(['extra_000', 'extra_001']));
    expect(names.filter((n) => n.includes('extra_'))).toEqual(['extra_000', 'extra_001']);
    expect(await callText(host, 'extra_001')).toBe('extra_001');
    expect(names).toHaveLength(base.tools.length * 3 + 2);

    const prompts = (await walk(host, 'prompts/list')).ids;
    expect(prompts).toContain('extra_prompt_000');
    expect(prompts).toEqual(expect.arrayContaining(['a__greet', 'b__greet', 'gamma__greet']));
  });

  it('the alias replaces the server name, and the override keeps that server prefixed', async () => {
    const names = await toolNames(host);
    expect(names.some((n) => n.startsWith('c__'))).toBe(false);
    for (const [tool, fixture] of [
      ['a__stats', 'fixture-a'],
      ['b__stats', 'fixture-b'],
      ['gamma__stats', 'fixture-c'],
    ]) {
      expect((await statsOf(host, tool)).name).toBe(fixture);
    }
    // The alias is also the prefix of c's rewritten resources.
    const uris = (await walk(host, 'resources/list')).ids;
    expect(uris).toContain('switchboard://gamma/fixture://static/hello');
    // c alone lists fixture://extra/000: no collision, so it keeps its URI.
    expect(uris).toContain('fixture://extra/000');

    // Every tool above collides, so auto mode alone would prefix it: the override shows in a
    // name only c has, which auto would leave bare.
    expect(await callText(host, 'gamma__add_tool', { name: 'gamma_only' })).toBe('added gamma_only');
    const named = await until(async () => {
      const n = await toolNames(host);
      return (n.includes('gamma__gamma_only') || n.includes('gamma_only')) && n;
    }, 10_000, 'gamma_only listed');
    expect(named).toContain('gamma__gamma_only');
    expect(named).not.toContain('gamma_only');
    expect(await callText(host, 'gamma__gamma_only')).toBe('dynamic:gamma_only');
    expect(await callText(host, 'gamma__remove_tool', { name: 'gamma_only' })).toBe('removed gamma_only');
    await eventually(async () => !(await toolNames(host)).includes('gamma__gamma_only'), 10_000, 'gamma_only gone');
  });

  it('a tool added at runtime to one upstream appears bare; added to a prefix-mode one, it stays bare', async () => {
    const before = host.notifications.get('notifications/tools/list_changed')?.length ?? 0;
    expect(await callText(host, 'a__add_tool', { name: 'only_here' })).toBe('added only_here');
    await eventually(async () => (await toolNames(host)).includes('only_here'), 10_000, 'only_here listed');
    expect(await callText(host, 'only_here')).toBe('dynamic:only_here');
    // gamma is in prefix mode: it never publishes a bare name, so a's is not contested.
    expect(await callText(host, 'gamma__add_tool', { name: 'only_here' })).toBe('added only_here');
    const names = await until(async () => {
      const n = await toolNames(host);
      return n.includes('gamma__only_here') && n;
    });
    expect(names).toContain('only_here');
    expect(names).not.toContain('a__only_here');
    expect(await callText(host, 'only_here')).toBe('dynamic:only_here');
    expect(await callText(host, 'gamma__only_here')).toBe('dynamic:only_here');
    await eventually(() => (host.notifications.get('notifications/tools/list_changed')?.length ?? 0) > before);
  });

  it('a tool added at runtime to a second auto server: the newcomer is prefixed, the published name stays', async () => {
    // Hosts already know only_here as a's tool: it must not change meaning, nor vanish.
    expect(await callText(host, 'b__add_tool', { name: 'only_here' })).toBe('added only_here');
    const names = await until(async () => {
      const n = await toolNames(host);
      return n.includes('b__only_here') && n;
    });
    expect(names).toContain('only_here');
    expect(names).not.toContain('a__only_here');
    expect(await callText(host, 'only_here')).toBe('dynamic:only_here');
    expect((await statsOf(host, 'a__stats')).name).toBe('fixture-a');
    expect(await callText(host, 'b__only_here')).toBe('dynamic:only_here');
  });
});

describe('namespace: none, with a per-server override and an alias', () => {
  let daemon: DaemonHandle;
  let host: Host;

  beforeAll(async () => {
    daemon = await start({
      namespace: 'none',
      mcpServers: {
        a: stdioFixture({ FIXTURE_NAME: 'fixture-a' }),
        b: stdioFixture({ FIXTURE_NAME: 'fixture-b', FIXTURE_EXTRA_TOOLS: '1' }),
        c: stdioFixture({ FIXTURE_NAME: 'fixture-c', FIXTURE_EXTRA_PROMPTS: '1' }, { alias: 'cc', namespace: 'prefix' }),
      },
    });
    host = await connectHost('streamable-http', { daemon });
  });
  afterAll(async () => {
    await host?.close();
    await daemon?.stop();
  });

  it('the first server keeps a contested name, later ones are prefixed; unique names stay bare', async () => {
    const names = await toolNames(host);
    for (const t of base.tools) expect(names).toEqual(expect.arrayContaining([t, `b__${t}`, `cc__${t}`]));
    expect(names).toContain('extra_000');
    expect(names).toHaveLength(base.tools.length * 3 + 1);
    expect((await statsOf(host, 'stats')).name).toBe('fixture-a');
    expect((await statsOf(host, 'b__stats')).name).toBe('fixture-b');
    expect((await statsOf(host, 'cc__stats')).name).toBe('fixture-c');
    expect(await callText(host, 'echo', { text: 'to a' })).toBe('to a');
  });

  it("the override prefixes even a name only that server has (c's extra prompt)", async () => {
    const prompts = (await walk(host, 'prompts/list')).ids;
    expect(prompts).toEqual(expect.arrayContaining(['greet', 'b__greet', 'cc__greet', 'cc__extra_prompt_000']));
    expect(prompts).not.toContain('extra_prompt_000');
    const got = await host.client.getPrompt({ name: 'cc__extra_prompt_000' });
    expect(got.messages[0].content).toMatchObject({ type: 'text', text: 'This is extra_prompt_000.' });
  });
});

describe('the 64-character limit', () => {
  let daemon: DaemonHandle;

  const config = {
    mcpServers: {
      alpha: stdioFixture({ FIXTURE_NAME: 'fixture-alpha', FIXTURE_LONG_NAME: '1' }),
      beta: stdioFixture({ FIXTURE_NAME: 'fixture-beta', FIXTURE_LONG_NAME: '1' }, { alias: 'b2' }),
    },
  };

  async function longNames(host: Host): Promise<Record<string, string>> {
    const names = await toolNames(host);
    for (const n of names) expect(n.length).toBeLessThanOrEqual(64);
    const long = names.filter((n) => n.includes('deliberately'));
    expect(long).toHaveLength(2);
    return {
      alpha: long.find((n) => n.startsWith('alpha__'))!,
      beta: long.find((n) => n.startsWith('b2__'))!,
    };
  }

  afterAll(() => daemon?.stop());

  it('shortens the 70-character tool name to a distinct, callable name that survives a restart', async () => {
    expect(LONG_TOOL_NAME.length).toBe(70);
    daemon = await start(config);
    let host = await connectHost('streamable-http', { daemon });
    const first = await longNames(host);
    expect(first.alpha).toBeDefined();
    expect(first.beta).toBeDefined();
    expect(first.alpha).not.toBe(first.beta);

    // Callable, and each name reaches its own upstream (the stats call counts itself too).
    const a0 = (await statsOf(host, 'alpha__stats')).calls;
    const b0 = (await statsOf(host, 'b2__stats')).calls;
    expect(await callText(host, first.alpha)).toBe(LONG_TOOL_NAME);
    expect((await statsOf(host, 'alpha__stats')).calls).toBe(a0 + 2);
    expect((await statsOf(host, 'b2__stats')).calls).toBe(b0 + 1);
    expect(await callText(host, first.beta)).toBe(LONG_TOOL_NAME);
    expect((await statsOf(host, 'b2__stats')).calls).toBe(b0 + 3);
    await host.close();

    // A restart of the daemon (new upstream processes too) gives the same names.
    const configPath = daemon.configPath;
    await daemon.stop();
    daemon = await startDaemon(configPath);
    host = await connectHost('streamable-http', { daemon });
    expect(await longNames(host)).toEqual(first);
    expect(await callText(host, first.beta)).toBe(LONG_TOOL_NAME);
    await host.close();
  });
});

/**
 * What the gateway must offer for these upstream capabilities: the union of what it relays.
 * Tools and logging always (the gateway serves tools even before any upstream is up, and it
 * forwards upstream logs, filtering them per session itself); every list is listChanged,
 * since the merged lists change whenever an upstream comes or goes.
 */
function unionOf(upstreams: Item[]): Item {
  const any = (key: string) => upstreams.some((c) => c[key] !== undefined);
  const subscribe = upstreams.some((c) => Boolean((c.resources as Item | undefined)?.subscribe));
  return {
    tools: { listChanged: true },
    logging: {},
    ...(any('prompts') && { prompts: { listChanged: true } }),
    ...(any('resources') && { resources: { listChanged: true, ...(subscribe && { subscribe: true }) } }),
    ...(any('completions') && { completions: {} }),
  };
}

/** Runs `use` with an SDK client connected straight to an upstream, bypassing the gateway. */
async function direct<T>(server: { command: string; args: string[] }, use: (client: Client) => Promise<T>): Promise<T> {
  // The capabilities Switchboard declares upstream: servers offer some tools only to clients
  // that can answer sampling or elicitation.
  const client = new Client(
    { name: 'reference', version: '1' },
    { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } } },
  );
  await client.connect(new StdioClientTransport({ ...server, env: getDefaultEnvironment(), stderr: 'ignore' }));
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

describe('capabilities: the union of the upstreams', () => {
  const demo = { command: process.execPath, args: [join(REPO_ROOT, 'apps/demo-upstream/dist/main.js')] };

  async function gatewayCapabilities(servers: Item): Promise<Item> {
    const daemon = await start({ mcpServers: servers });
    try {
      const host = await connectHost('streamable-http', { daemon });
      const caps = host.client.getServerCapabilities() as Item;
      await host.close();
      return caps;
    } finally {
      await daemon.stop();
    }
  }

  it('demo (tools, prompts, resources without subscribe) alone, and with a fixture (subscribe, completions, logging)', async () => {
    const demoCaps = await direct(demo, async (client) => client.getServerCapabilities() as Item);
    // The premise: the two upstreams differ, so the union is more than either.
    expect(demoCaps.completions).toBeUndefined();
    expect((demoCaps.resources as Item).subscribe).toBeUndefined();
    expect(base.caps.completions).toBeDefined();
    expect((base.caps.resources as Item).subscribe).toBe(true);

    const [demoOnly, both] = await Promise.all([
      gatewayCapabilities({ demo }),
      gatewayCapabilities({ demo, fx: stdioFixture() }),
    ]);
    expect(demoOnly).toEqual(unionOf([demoCaps]));
    expect(demoOnly).toEqual({ tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true }, logging: {} });
    expect(both).toEqual(unionOf([demoCaps, base.caps]));
    expect(both).toEqual({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true, subscribe: true },
      logging: {},
      completions: {},
    });
  });
});

describe('a 2024-11-05 upstream, which completes without a capability to say so', () => {
  const legacy = (env: Record<string, string> = {}) => ({
    command: process.execPath,
    args: [join(REPO_ROOT, 'test/fixtures/upstream-older-revision.mjs')],
    env,
  });
  const complete = (host: Host, value: string) =>
    host.client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value } });

  it('is asked: completions are advertised, and its suggestions reach the host', async () => {
    const daemon = await start({ namespace: 'none', mcpServers: { legacy: legacy() } });
    try {
      const host = await connectHost('streamable-http', { daemon });
      expect(host.client.getServerCapabilities()).toMatchObject({ prompts: { listChanged: true }, completions: {} });
      expect((await complete(host, 'al')).completion.values).toEqual(['albert', 'alice']);
      await host.close();
    } finally {
      await daemon.stop();
    }
  });

  it('that does not complete answers -32601, which the host hears as no suggestions', async () => {
    const daemon = await start({ namespace: 'none', mcpServers: { legacy: legacy({ LEGACY_COMPLETES: '0' }) } });
    try {
      const host = await connectHost('streamable-http', { daemon });
      expect((await complete(host, 'al')).completion).toEqual({ values: [], hasMore: false });
      await host.close();
    } finally {
      await daemon.stop();
    }
  });
});

describe('the public reference server (@modelcontextprotocol/server-everything) next to a fixture', () => {
  const PAGE = 4;
  let daemon: DaemonHandle;
  let host: Host;
  let reference: { tools: string[]; taskOnly: string[]; resources: string[]; prompts: string[]; templates: string[]; caps: Item };

  beforeAll(async () => {
    reference = await direct({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] }, async (client) => {
      const { tools } = await client.listTools();
      return {
        // A tool that can only be called as a task is served too: the gateway runs the task.
        tools: tools.map((t) => t.name),
        taskOnly: tools.filter((t) => t.execution?.taskSupport === 'required').map((t) => t.name),
        resources: (await client.listResources()).resources.map((r) => r.uri),
        prompts: (await client.listPrompts()).prompts.map((p) => p.name),
        templates: (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
        caps: client.getServerCapabilities() as Item,
      };
    });
    daemon = await start({
      pageSize: PAGE,
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] }, fx: stdioFixture() },
    });
    host = await connectHost('streamable-http', { daemon });
  });
  afterAll(async () => {
    await host?.close();
    await daemon?.stop();
  });

  it('its tools appear prefixed and everything__echo works', async () => {
    expect(reference.tools).toContain('echo');
    const names = await until(async () => {
      const n = await toolNames(host);
      return reference.tools.every((t) => n.includes(`everything__${t}`)) && n;
    });
    expect([...names].sort()).toEqual([...reference.tools.map((t) => `everything__${t}`), ...base.tools.map((t) => `fx__${t}`)].sort());
    expect(await callText(host, 'everything__echo', { message: 'through the gateway' })).toBe('Echo: through the gateway');
    expect(await callText(host, 'everything__get-sum', { a: 2, b: 40 })).toContain('42');
  });

  it('a tool only callable as a task is served as a plain tool (the gateway runs the task); a call\'s task augmentation is ignored', async () => {
    expect(reference.taskOnly).toContain('simulate-research-query');
    const names = await toolNames(host);
    for (const t of reference.taskOnly) expect(names).toContain(`everything__${t}`);
    const listed = (await walk(host, 'tools/list')).pages.flat();
    expect(listed.filter((t) => 'execution' in t)).toEqual([]);

    // The gateway declares no tasks capability, so it processes the call normally (spec,
    // 2025-11-25 tasks): the host gets the tool's result, not a task it could never poll.
    expect(host.client.getServerCapabilities()?.tasks).toBeUndefined();
    const echo = (await host.client.request({
      method: 'tools/call',
      params: { name: 'everything__echo', arguments: { message: 'as a task?' }, task: { ttl: 60_000 } },
    })) as Item;
    expect(echo).toEqual({ content: [{ type: 'text', text: 'Echo: as a task?' }] });

    // And the task-only tool, called plainly, answers with its result.
    expect(await callText(host, 'everything__simulate-research-query', { topic: 'gateways' })).toContain('# Research Report: gateways');
  });

  it('one of its resources reads through the gateway', async () => {
    const uri = reference.resources.find((u) => u.endsWith('features.md'))!;
    expect(uri).toBeDefined();
    const result = await host.client.readResource({ uri });
    expect(result.contents[0].uri).toBe(uri);
    expect((result.contents[0] as { text: string }).text).toContain('## Tools');
  });

  it('lists across both paginate: every item once, pages of at most the page size', async () => {
    const want: [ListMethod, string[]][] = [
      ['tools/list', [...reference.tools.map((t) => `everything__${t}`), ...base.tools.map((t) => `fx__${t}`)]],
      ['resources/list', [...reference.resources, ...base.resources]],
      ['prompts/list', [...reference.prompts.map((p) => `everything__${p}`), ...base.prompts.map((p) => `fx__${p}`)]],
      ['resources/templates/list', [...reference.templates, ...base.templates]],
    ];
    for (const [method, ids] of want) {
      const first = await walk(host, method);
      expect([...first.ids].sort(), method).toEqual([...ids].sort());
      expect(first.pages.length, method).toBe(Math.max(1, Math.ceil(ids.length / PAGE)));
      for (const page of first.pages) expect(page.length).toBeLessThanOrEqual(PAGE);
      expect((await walk(host, method)).pages).toEqual(first.pages);
    }
  });

  it('capabilities are the union of both, for what the gateway relays', () => {
    expect(host.client.getServerCapabilities()).toEqual(unionOf([reference.caps, base.caps]));
  });
});

describe('dead upstreams never block the others', () => {
  let daemon: DaemonHandle;
  let closedPort: number;

  beforeAll(async () => {
    closedPort = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
  });
  afterAll(() => daemon?.stop());

  it('a fixture next to a command that exits and an http server that is not there', async () => {
    daemon = await start({
      // info: the daemon says when a new session stopped waiting for upstreams (catalog-sync.ts).
      log: { level: 'info' },
      // A gateway that waited for a connect timeout would wait past this test's own.
      timeouts: { connectMs: 3_600_000 },
      mcpServers: {
        fx: stdioFixture({ FIXTURE_NAME: 'alive' }),
        broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] },
        offline: { type: 'http', url: `http://127.0.0.1:${closedPort}/mcp` },
      },
    });
    const host = await connectHost('streamable-http', { daemon });
    const names = await toolNames(host);
    expect(await callText(host, 'fx__echo', { text: 'still here' })).toBe('still here');
    expect([...names].sort()).toEqual(base.tools.map((t) => `fx__${t}`).sort());
    // Nobody waited for the broken ones: initialize waits (up to 5 s) only for upstreams still
    // on their first connect, and a failed first connect ends that wait for its upstream. Had
    // the session waited the wait out instead, the daemon would have said so, before answering.
    expect(daemon.stderr()).not.toContain('stopped waiting for upstreams still on their first connect');

    // The broken ones fail fast while down.
    const status = await until(async () => {
      const res = await request(daemon.baseUrl).get('/readyz');
      const byName = Object.fromEntries((res.body.upstreams as Item[]).map((u) => [u.name, u]));
      const down = ['broken', 'offline'].every((n) => byName[n]?.state === 'down' && typeof byName[n]?.lastError === 'string');
      return down && { res, byName };
    }, 15_000, 'broken upstreams down with lastError');
    expect(status.res.status).toBe(503);
    expect(status.res.body.status).toBe('not_ready');
    expect(status.byName.fx).toMatchObject({ state: 'ready', transport: 'stdio' });
    expect(status.byName.offline.transport).toMatch(/http/);
    await host.close();
  });

  it('one never reached yet counts as possibly offering prompts, resources and completions, so early sessions are not left without them', async () => {
    const toolsOnly = { command: process.execPath, args: [join(REPO_ROOT, 'test/fixtures/upstream-older-revision.mjs')], env: { LEGACY_TOOLS_ONLY: '1' } };
    const early = await start({ mcpServers: { legacy: toolsOnly, offline: { type: 'http', url: `http://127.0.0.1:${closedPort}/mcp` } } });
    try {
      const host = await connectHost('streamable-http', { daemon: early });
      expect(host.client.getServerCapabilities()).toEqual({
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { listChanged: true },
        completions: {},
        logging: {},
      });
      await host.close();
    } finally {
      await early.stop();
    }
  });
});
