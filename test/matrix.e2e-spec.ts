import { ProtocolError, type CallToolResult, type Client, type Tool } from '@modelcontextprotocol/client';
import {
  BLOB_URI,
  connectToFixture,
  HELLO_URI,
  ITEM_TEMPLATE,
  startHttpFixture,
  type FixtureConnection,
  type FixtureKind,
  type FixtureStatsReport,
  type HttpFixture,
} from '@switchboard/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, writeConfig, type DaemonHandle } from './support/daemon.js';
import { connectHost, type Host, type HostTransport } from './support/hosts.js';

/**
 * The transport matrix: the real daemon between real SDK hosts and real fixture upstreams,
 * over every downstream transport (Streamable HTTP, HTTP+SSE, stdio) times every upstream
 * transport (stdio, Streamable HTTP, HTTP+SSE), plus an upstream configured as `type: http`
 * that is really an HTTP+SSE server (the spec's fallback detection). Every combination runs
 * the same checks against one gateway; what the gateway answers is compared with what the
 * fixture answers to a client connected to it directly.
 */

type UpstreamCase = 'stdio' | 'http' | 'sse' | 'http->sse';

interface Combination {
  downstream: HostTransport;
  upstream: UpstreamCase;
}

const DOWNSTREAMS: HostTransport[] = ['streamable-http', 'sse', 'stdio'];
const UPSTREAMS: UpstreamCase[] = ['stdio', 'http', 'sse'];
const MATRIX: Combination[] = [
  ...DOWNSTREAMS.flatMap((downstream) => UPSTREAMS.map((upstream) => ({ downstream, upstream }))),
  // Configured as Streamable HTTP, served as HTTP+SSE: the gateway must detect and fall back.
  { downstream: 'streamable-http', upstream: 'http->sse' },
];

/** Which fixture process serves an upstream case, and the transport the gateway ends up on. */
const FIXTURE_OF: Record<UpstreamCase, FixtureKind> = { stdio: 'stdio', http: 'http', sse: 'sse', 'http->sse': 'sse' };
const WIRE_OF: Record<UpstreamCase, string> = { stdio: 'stdio', http: 'streamable-http', sse: 'sse', 'http->sse': 'sse' };

const PREFIX = 'fx__';
const STACK_TRACE = /\bat \S+ \(|node:internal|\.[cm]?[jt]s:\d+/;

/** One direct connection per fixture kind: the reference the gateway's answers must equal. */
const references = new Map<FixtureKind, Promise<FixtureConnection>>();
function reference(kind: FixtureKind): Promise<FixtureConnection> {
  let ref = references.get(kind);
  if (!ref) {
    ref = connectToFixture(kind);
    references.set(kind, ref);
  }
  return ref;
}

afterAll(async () => {
  await Promise.all([...references.values()].map(async (ref) => (await ref.catch(() => undefined))?.close()));
});

function notes(host: Host, method: string): Record<string, unknown>[] {
  return host.notifications.get(method) ?? [];
}

function textOf(result: CallToolResult): string {
  const block = result.content[0];
  if (block?.type !== 'text') throw new Error(`expected a text block, got ${JSON.stringify(result.content)}`);
  return block.text;
}

async function stats(client: Client): Promise<FixtureStatsReport> {
  return JSON.parse(textOf(await client.callTool({ name: `${PREFIX}stats`, arguments: {} }))) as FixtureStatsReport;
}

/** The error a rejected promise carries, failing the test if it resolved. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the request to fail, but it succeeded');
}

/** The gateway keeps its merged lists in its own (sorted) order: compare them as sets. */
const sortedBy = <T>(items: T[], key: (item: T) => string) =>
  [...items].sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
const byName = <T extends { name: string }>(items: T[]) => sortedBy(items, (i) => i.name);

describe.each(MATRIX)('host over $downstream, upstream over $upstream', ({ downstream, upstream }) => {
  let fixture: HttpFixture | undefined;
  let daemon: DaemonHandle | undefined;
  let configPath: string;
  let direct: Client;
  /** The main host, and a second one on the same downstream transport. */
  let a: Host;
  let b: Host;
  const hosts: Host[] = [];

  const connect = async () => {
    const host = await connectHost(downstream, { daemon, configPath });
    hosts.push(host);
    return host;
  };

  beforeAll(async () => {
    const kind = FIXTURE_OF[upstream];
    const [ref] = await Promise.all([
      reference(kind),
      kind === 'stdio' ? undefined : startHttpFixture(kind).then((f) => (fixture = f)),
    ]);
    direct = ref.client;
    const server =
      upstream === 'stdio' ? stdioFixture() : { type: upstream === 'sse' ? 'sse' : 'http', url: fixture!.url };
    configPath = writeConfig({ mcpServers: { fx: server } });
    if (downstream !== 'stdio') daemon = await startDaemon(configPath);
    [a, b] = await Promise.all([connect(), connect()]);
  });

  afterAll(async () => {
    await Promise.all(hosts.map((h) => h.close()));
    await stopAllDaemons();
    await fixture?.stop();
  });

  // A stdio host has no HTTP endpoint to ask; the other two show which transport was chosen.
  if (downstream !== 'stdio') {
    it('reaches the upstream over the expected wire transport', async () => {
      const ready = (await (await fetch(`${daemon!.baseUrl}/readyz`)).json()) as { upstreams: unknown[] };
      expect(ready.upstreams).toEqual([expect.objectContaining({ name: 'fx', state: 'ready', transport: WIRE_OF[upstream] })]);
    });
  }

  it('tools/list: every fixture tool under its fx__ name, definition unchanged', async () => {
    const expected = (await direct.listTools()).tools.map((t: Tool) => ({ ...t, name: `${PREFIX}${t.name}` }));
    const { tools } = await a.client.listTools();
    expect(byName(tools)).toEqual(byName(expected));
    // The definitions that carry every optional field came through whole.
    const allContent = tools.find((t) => t.name === `${PREFIX}all_content`)!;
    expect(allContent.title).toBe('All content kinds');
    expect(allContent.icons).toHaveLength(1);
    expect(allContent.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(tools.find((t) => t.name === `${PREFIX}add`)!.outputSchema).toBeDefined();
  });

  it('tools/call: echo, every content kind, structured content', async () => {
    const echo = await a.client.callTool({ name: `${PREFIX}echo`, arguments: { text: 'héllo ✓' } });
    expect(echo).toEqual(await direct.callTool({ name: 'echo', arguments: { text: 'héllo ✓' } }));
    expect(textOf(echo)).toBe('héllo ✓');

    const all = await a.client.callTool({ name: `${PREFIX}all_content`, arguments: {} });
    expect(all).toEqual(await direct.callTool({ name: 'all_content', arguments: {} }));
    expect(all.content.map((c) => c.type)).toEqual(['text', 'image', 'audio', 'resource', 'resource_link']);

    const add = await a.client.callTool({ name: `${PREFIX}add`, arguments: { a: 2, b: 40 } });
    expect(add).toEqual(await direct.callTool({ name: 'add', arguments: { a: 2, b: 40 } }));
    expect(add.structuredContent).toEqual({ sum: 42 });
  });

  it('older hosts get what their revision defines: 2024-11-05 and 2025-03-26', async () => {
    const [old, mid] = await Promise.all([
      connectHost(downstream, { daemon, configPath }, { supportedProtocolVersions: ['2024-11-05'] }),
      connectHost(downstream, { daemon, configPath }, { supportedProtocolVersions: ['2025-03-26'] }),
    ]);
    hosts.push(old, mid);
    // initialize: serverInfo.title is 2025-06-18; the completions capability 2025-03-26.
    expect(old.client.getServerVersion()).toEqual({ name: 'switchboard', version: expect.any(String) });
    expect(mid.client.getServerVersion()).toEqual({ name: 'switchboard', version: expect.any(String) });
    expect(old.client.getServerCapabilities()?.completions).toBeUndefined();
    expect(mid.client.getServerCapabilities()?.completions).toEqual({});

    // tools/list: annotations came with 2025-03-26; title and outputSchema with 2025-06-18; icons with 2025-11-25.
    const toolOf = async (host: Host, name: string) => (await host.client.listTools()).tools.find((t) => t.name === `${PREFIX}${name}`)!;
    const [oldAll, midAll, oldAdd, midAdd] = await Promise.all([
      toolOf(old, 'all_content'),
      toolOf(mid, 'all_content'),
      toolOf(old, 'add'),
      toolOf(mid, 'add'),
    ]);
    expect(Object.keys(oldAll).sort()).toEqual(['description', 'inputSchema', 'name']);
    expect(Object.keys(midAll).sort()).toEqual(['annotations', 'description', 'inputSchema', 'name']);
    expect(oldAdd.outputSchema).toBeUndefined();
    expect(midAdd.outputSchema).toBeUndefined();

    // tools/call: audio is 2025-03-26 and resource_link 2025-06-18; each becomes a text block.
    const [oldContent, midContent] = await Promise.all([
      old.client.callTool({ name: `${PREFIX}all_content`, arguments: {} }),
      mid.client.callTool({ name: `${PREFIX}all_content`, arguments: {} }),
    ]);
    expect(oldContent.content.map((c) => c.type)).toEqual(['text', 'image', 'text', 'resource', 'text']);
    expect(midContent.content.map((c) => c.type)).toEqual(['text', 'image', 'audio', 'resource', 'text']);
    expect(oldContent.content[2]).toEqual({ type: 'text', text: expect.stringContaining('audio/wav') });
    expect(midContent.content[4]).toEqual({ type: 'text', text: expect.stringContaining(HELLO_URI) });

    // structuredContent is 2025-06-18: dropped, and its JSON carried by a text block.
    for (const host of [old, mid]) {
      const add = await host.client.callTool({ name: `${PREFIX}add`, arguments: { a: 2, b: 40 } });
      expect(add.structuredContent).toBeUndefined();
      expect(add.content).toEqual([{ type: 'text', text: '42' }, { type: 'text', text: '{"sum":42}' }]);
    }

    // The progress notification's message is 2025-03-26.
    const progress = { old: [] as Record<string, unknown>[], mid: [] as Record<string, unknown>[] };
    await Promise.all([
      old.client.callTool({ name: `${PREFIX}slow`, arguments: { ms: 200, steps: 2 } }, { onprogress: (p) => void progress.old.push(p) }),
      mid.client.callTool({ name: `${PREFIX}slow`, arguments: { ms: 200, steps: 2 } }, { onprogress: (p) => void progress.mid.push(p) }),
    ]);
    expect(progress.old[0]).toEqual({ progress: 1, total: 2 });
    expect(progress.mid[0]).toEqual({ progress: 1, total: 2, message: 'step 1 of 2' });
  });

  it('tools/call: a large result arrives byte for byte (stdio results pass through as text)', async () => {
    // Quotes, backslashes, brackets, newlines and non-ASCII, past the pass-through threshold.
    const text = `"}]\\ {[\n✓ ${'é"\\'.repeat(3)}`.repeat(12_000);
    const echo = await a.client.callTool({ name: `${PREFIX}echo`, arguments: { text } });
    expect(textOf(echo)).toBe(text);
    expect(echo).toEqual(await direct.callTool({ name: 'echo', arguments: { text } }));
  });

  it('tool errors: isError result, JSON-RPC error without internals, unknown tool -32602', async () => {
    const fail = await a.client.callTool({ name: `${PREFIX}fail`, arguments: {} });
    expect(fail.isError).toBe(true);
    expect(fail).toEqual(await direct.callTool({ name: 'fail', arguments: {} }));

    const thrown = await rejectionOf(a.client.callTool({ name: `${PREFIX}throw_error`, arguments: {} }));
    const directThrown = await rejectionOf(direct.callTool({ name: 'throw_error', arguments: {} }));
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect((thrown as ProtocolError).code).toBe(-32603);
    expect((thrown as ProtocolError).message).toBe((directThrown as ProtocolError).message);
    expect((thrown as ProtocolError).message).not.toMatch(STACK_TRACE);
    expect(JSON.stringify((thrown as ProtocolError).data ?? null)).not.toMatch(STACK_TRACE);

    const unknown = await rejectionOf(a.client.callTool({ name: `${PREFIX}no_such_tool`, arguments: {} }));
    expect(unknown).toBeInstanceOf(ProtocolError);
    expect((unknown as ProtocolError).code).toBe(-32602);
  });

  it('resources: list, templates, read text, blob and templated, unchanged', async () => {
    const byUri = <T extends { uri: string }>(items: T[]) => sortedBy(items, (i) => i.uri);
    expect(byUri((await a.client.listResources()).resources)).toEqual(byUri((await direct.listResources()).resources));
    const byTemplate = <T extends { uriTemplate: string }>(items: T[]) => sortedBy(items, (i) => i.uriTemplate);
    expect(byTemplate((await a.client.listResourceTemplates()).resourceTemplates)).toEqual(
      byTemplate((await direct.listResourceTemplates()).resourceTemplates),
    );
    for (const uri of [HELLO_URI, BLOB_URI, 'fixture://items/2']) {
      const read = await a.client.readResource({ uri });
      expect(read).toEqual(await direct.readResource({ uri }));
    }
    const blob = (await a.client.readResource({ uri: BLOB_URI })).contents[0] as { blob?: string };
    expect(Buffer.from(blob.blob!, 'base64')).toEqual(Buffer.from(Array.from({ length: 16 }, (_, i) => i)));
  });

  it('prompts: list and get under the fx__ name', async () => {
    const expected = (await direct.listPrompts()).prompts.map((p) => ({ ...p, name: `${PREFIX}${p.name}` }));
    expect(byName((await a.client.listPrompts()).prompts)).toEqual(byName(expected));
    const args = { name: 'Ada', style: 'formal' };
    const got = await a.client.getPrompt({ name: `${PREFIX}greet`, arguments: args });
    expect(got).toEqual(await direct.getPrompt({ name: 'greet', arguments: args }));
    expect(got.messages[0].content).toEqual({ type: 'text', text: 'Please greet Ada in a formal style.' });
  });

  it('completion/complete: prompt argument and template variable', async () => {
    const style = await a.client.complete({ ref: { type: 'ref/prompt', name: `${PREFIX}greet` }, argument: { name: 'style', value: 'f' } });
    expect(style).toEqual(await direct.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'style', value: 'f' } }));
    expect(style.completion.values).toEqual(['formal']);

    const ref = { type: 'ref/resource' as const, uri: ITEM_TEMPLATE };
    const id = await a.client.complete({ ref, argument: { name: 'id', value: '1' } });
    expect(id).toEqual(await direct.complete({ ref, argument: { name: 'id', value: '1' } }));
    expect(id.completion.values).toEqual(['1', '10']);
  });

  it('progress: notifications reach the host under its own token', async () => {
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const result = await a.client.callTool(
      { name: `${PREFIX}slow`, arguments: { ms: 300, steps: 3 } },
      { onprogress: (p) => void progress.push(p) },
    );
    expect(textOf(result)).toBe('slept 300ms in 3 steps');
    // The SDK client may drop the last one when it shares a chunk with the result.
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]).toEqual({ progress: 1, total: 3, message: 'step 1 of 3' });
    progress.forEach((p, i) => expect(p.progress).toBe(i + 1));
  });

  it('progress: two hosts at once each get only their own', async () => {
    // Both SDK clients number their requests alike, so their tokens may well be equal: the
    // gateway's own upstream tokens keep the two streams apart.
    const seen = { a: [] as { total?: number }[], b: [] as { total?: number }[] };
    const [ra, rb] = await Promise.all([
      a.client.callTool({ name: `${PREFIX}slow`, arguments: { ms: 300, steps: 3 } }, { onprogress: (p) => void seen.a.push(p) }),
      b.client.callTool({ name: `${PREFIX}slow`, arguments: { ms: 400, steps: 4 } }, { onprogress: (p) => void seen.b.push(p) }),
    ]);
    expect(textOf(ra)).toBe('slept 300ms in 3 steps');
    expect(textOf(rb)).toBe('slept 400ms in 4 steps');
    expect(seen.a.length).toBeGreaterThanOrEqual(1);
    expect(seen.b.length).toBeGreaterThanOrEqual(1);
    expect(seen.a.every((p) => p.total === 3)).toBe(true);
    expect(seen.b.every((p) => p.total === 4)).toBe(true);
  });

  it('cancellation: an aborted call is cancelled at the upstream', async () => {
    const before = (await stats(a.client)).cancelled;
    const controller = new AbortController();
    // Abort once the upstream is demonstrably running the call: at its first progress report.
    const call = a.client.callTool(
      { name: `${PREFIX}slow`, arguments: { ms: 10_000, steps: 50 } },
      { signal: controller.signal, onprogress: () => controller.abort('host gave up') },
    );
    const err = await rejectionOf(call);
    expect(controller.signal.aborted).toBe(true);
    expect(String(err)).toMatch(/abort|cancel|host gave up/i);
    await eventually(async () => (await stats(a.client)).cancelled > before, 8_000, 'the upstream to count the cancellation');
    // The session stays usable afterwards.
    expect(textOf(await a.client.callTool({ name: `${PREFIX}echo`, arguments: { text: 'after' } }))).toBe('after');
  });

  it('logging: messages labelled with the server, filtered by each session level', async () => {
    // The quieter session asks first: the upstream must still end up sending what a wants.
    await b.client.setLoggingLevel('error');
    await a.client.setLoggingLevel('debug');

    const debug = `debug from ${downstream}/${upstream}`;
    await a.client.callTool({ name: `${PREFIX}log`, arguments: { level: 'debug', message: debug } });
    await eventually(() => notes(a, 'notifications/message').some((m) => m.data === debug), 8_000, 'the debug message');

    const warning = `warning from ${downstream}/${upstream}`;
    await a.client.callTool({ name: `${PREFIX}log`, arguments: { level: 'warning', message: warning } });
    const got = await eventually(
      () => notes(a, 'notifications/message').find((m) => m.data === warning),
      8_000,
      'the warning at the debug session',
    );
    expect(got).toEqual({ level: 'warning', logger: 'fx/fixture-logger', data: warning });

    // The error session asks for a warning and an error: only the error reaches it.
    const below = `below threshold ${downstream}/${upstream}`;
    const above = `above threshold ${downstream}/${upstream}`;
    await b.client.callTool({ name: `${PREFIX}log`, arguments: { level: 'warning', message: below } });
    await b.client.callTool({ name: `${PREFIX}log`, arguments: { level: 'error', message: above } });
    await eventually(() => notes(b, 'notifications/message').some((m) => m.data === above), 8_000, 'the error at the error session');
    expect(notes(b, 'notifications/message').filter((m) => m.level !== 'error' && m.level !== 'critical')).toEqual([]);
    expect(notes(b, 'notifications/message').some((m) => m.data === debug || m.data === warning || m.data === below)).toBe(false);
  });

  it('subscriptions: resources/updated reaches only the subscribed session', async () => {
    await a.client.subscribeResource({ uri: HELLO_URI });
    await b.client.subscribeResource({ uri: BLOB_URI });

    expect(textOf(await a.client.callTool({ name: `${PREFIX}touch_resource`, arguments: { uri: HELLO_URI } }))).toBe(
      `updated ${HELLO_URI}`,
    );
    await eventually(() => notes(a, 'notifications/resources/updated').length > 0, 8_000, 'the update at the subscriber');
    await b.client.callTool({ name: `${PREFIX}touch_resource`, arguments: { uri: BLOB_URI } });
    await eventually(() => notes(b, 'notifications/resources/updated').length > 0, 8_000, 'the update at the second subscriber');

    expect(notes(a, 'notifications/resources/updated')).toEqual([{ uri: HELLO_URI }]);
    expect(notes(b, 'notifications/resources/updated')).toEqual([{ uri: BLOB_URI }]);

    // Unsubscribing the last session releases the upstream subscription.
    await a.client.unsubscribeResource({ uri: HELLO_URI });
    expect(textOf(await a.client.callTool({ name: `${PREFIX}touch_resource`, arguments: { uri: HELLO_URI } }))).toBe(
      `not subscribed: ${HELLO_URI}`,
    );
  });

  it('list_changed: a tool added and removed upstream appears and disappears', async () => {
    const changed = 'notifications/tools/list_changed';
    const seenA = notes(a, changed).length;
    const seenB = notes(b, changed).length;
    // Only HTTP hosts share the daemon (and so the upstream connection) with host a.
    const shared = downstream !== 'stdio';

    expect(textOf(await a.client.callTool({ name: `${PREFIX}add_tool`, arguments: { name: 'dyn' } }))).toBe('added dyn');
    await eventually(() => notes(a, changed).length > seenA, 8_000, 'tools/list_changed after add_tool');
    expect((await a.client.listTools()).tools.map((t) => t.name)).toContain(`${PREFIX}dyn`);
    expect(textOf(await a.client.callTool({ name: `${PREFIX}dyn`, arguments: {} }))).toBe('dynamic:dyn');
    if (shared) {
      await eventually(() => notes(b, changed).length > seenB, 8_000, 'tools/list_changed at the other host');
      expect((await b.client.listTools()).tools.map((t) => t.name)).toContain(`${PREFIX}dyn`);
    }

    const seenA2 = notes(a, changed).length;
    expect(textOf(await a.client.callTool({ name: `${PREFIX}remove_tool`, arguments: { name: 'dyn' } }))).toBe('removed dyn');
    await eventually(() => notes(a, changed).length > seenA2, 8_000, 'tools/list_changed after remove_tool');
    expect((await a.client.listTools()).tools.map((t) => t.name)).not.toContain(`${PREFIX}dyn`);
    const gone = await rejectionOf(a.client.callTool({ name: `${PREFIX}dyn`, arguments: {} }));
    expect((gone as ProtocolError).code).toBe(-32602);
  });

  it('ping both ways', async () => {
    expect(await a.client.ping()).toEqual({});
    expect(textOf(await a.client.callTool({ name: `${PREFIX}ping_client`, arguments: {} }))).toBe('pong-ok');
  });
});
