import type { Client, LoggingMessageNotification, NotificationMethod, NotificationTypeMap } from '@modelcontextprotocol/client';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectToFixture, type FixtureConnection } from './fixture-client.js';
import { assertFixturesBuilt, type FixtureKind } from './fixture-process.js';
import type { FixtureStatsReport } from './fixtures/fixture-control-tools.js';
import { TINY_PNG_BASE64 } from './fixtures/fixture-content.js';

// These tests drive the built fixtures as real processes over real transports.
beforeAll(() => assertFixturesBuilt());

async function textOf(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error(`${name} answered no text: ${JSON.stringify(result)}`);
  return first.text;
}

async function stats(client: Client): Promise<FixtureStatsReport> {
  return JSON.parse(await textOf(client, 'stats')) as FixtureStatsReport;
}

/** Collects notifications of one method, in arrival order. */
function collect<M extends NotificationMethod>(client: Client, method: M): NotificationTypeMap[M][] {
  const seen: NotificationTypeMap[M][] = [];
  client.setNotificationHandler(method, (notification) => {
    seen.push(notification);
  });
  return seen;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe.each<FixtureKind>(['stdio', 'http', 'sse'])('fixture over %s', (kind) => {
  let fixture: FixtureConnection;
  let client: Client;

  beforeAll(async () => {
    fixture = await connectToFixture(kind, { FIXTURE_NAME: `alpha-${kind}`, FIXTURE_PROBE: 'probe-value' });
    client = fixture.client;
  });
  afterAll(() => fixture?.close());

  it('identifies itself with FIXTURE_NAME and declares its capabilities', () => {
    expect(client.getServerVersion()?.name).toBe(`alpha-${kind}`);
    expect(client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      logging: {},
      completions: {},
    });
  });

  it('answers echo, add with structured content, fail and throw_error', async () => {
    expect(await textOf(client, 'echo', { text: 'hi there' })).toBe('hi there');
    const added = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
    expect(added.structuredContent).toEqual({ sum: 42 });
    expect(added.content).toEqual([{ type: 'text', text: '42' }]);
    const failed = await client.callTool({ name: 'fail', arguments: {} });
    expect(failed.isError).toBe(true);
    const thrown = await rejection(client.callTool({ name: 'throw_error', arguments: {} }));
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect((thrown as ProtocolError).code).toBe(ProtocolErrorCode.InternalError);
    const invalid = await rejection(client.callTool({ name: 'add', arguments: { a: 'x' } }));
    expect((invalid as ProtocolError).code).toBe(ProtocolErrorCode.InvalidParams);
  });

  it('lists tool metadata and returns every content kind from all_content', async () => {
    const { tools } = await client.listTools();
    const allContent = tools.find((tool) => tool.name === 'all_content');
    expect(allContent).toMatchObject({ title: 'All content kinds', annotations: { readOnlyHint: true } });
    expect(allContent?.icons?.[0]?.src).toContain(TINY_PNG_BASE64);
    expect(tools.find((tool) => tool.name === 'add')?.outputSchema).toMatchObject({ properties: { sum: { type: 'number' } } });
    const result = await client.callTool({ name: 'all_content', arguments: {} });
    expect(result.content.map((block) => block.type)).toEqual(['text', 'image', 'audio', 'resource', 'resource_link']);
    expect(result.content[0]).toMatchObject({ annotations: { audience: ['user', 'assistant'], priority: 0.5 } });
    const audio = result.content[2];
    expect(audio?.type === 'audio' && Buffer.from(audio.data, 'base64').subarray(0, 4).toString()).toBe('RIFF');
    expect(result.content[4]).toMatchObject({ uri: 'fixture://static/hello', title: 'Hello resource', mimeType: 'text/plain' });
  });

  it('reports its environment and working directory', async () => {
    expect(await textOf(client, 'env', { name: 'FIXTURE_PROBE' })).toBe('probe-value');
    expect(await textOf(client, 'env', { name: 'FIXTURE_SURELY_UNSET' })).toBe('');
    expect(await textOf(client, 'cwd')).toBe(process.cwd());
    const first = await stats(client);
    expect(first.pid).toBe(fixture.pid);
    expect((await stats(client)).calls).toBe(first.calls + 1);
  });

  it('serves static, blob and templated resources with completion', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(['fixture://static/hello', 'fixture://static/blob']);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(['fixture://items/{id}']);
    const hello = await client.readResource({ uri: 'fixture://static/hello' });
    expect(hello.contents[0]).toMatchObject({ text: `Hello from alpha-${kind}`, mimeType: 'text/plain' });
    const blob = await client.readResource({ uri: 'fixture://static/blob' });
    const blobContents = blob.contents[0];
    expect(blobContents && 'blob' in blobContents && Buffer.from(blobContents.blob, 'base64')).toEqual(
      Buffer.from([...Array(16).keys()]),
    );
    expect((await client.readResource({ uri: 'fixture://items/7' })).contents[0]).toMatchObject({ text: 'item 7' });
    const missing = await rejection(client.readResource({ uri: 'fixture://nothing/here' }));
    expect(missing).toBeInstanceOf(ProtocolError);
    const completion = await client.complete({
      ref: { type: 'ref/resource', uri: 'fixture://items/{id}' },
      argument: { name: 'id', value: '1' },
    });
    expect(completion.completion.values).toEqual(['1', '10']);
  });

  it('tracks subscriptions and notifies subscribers only', async () => {
    const updates = collect(client, 'notifications/resources/updated');
    await client.subscribeResource({ uri: 'fixture://static/hello' });
    expect((await stats(client)).subscriptions).toEqual(['fixture://static/hello']);
    expect(await textOf(client, 'touch_resource', { uri: 'fixture://static/hello' })).toBe('updated fixture://static/hello');
    expect(updates.map((update) => update.params.uri)).toEqual(['fixture://static/hello']);
    await client.unsubscribeResource({ uri: 'fixture://static/hello' });
    expect((await stats(client)).subscriptions).toEqual([]);
    expect(await textOf(client, 'touch_resource', { uri: 'fixture://static/hello' })).toMatch(/^not subscribed/);
    expect(updates).toHaveLength(1);
  });

  it('serves the greet prompt with argument completion', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(['greet']);
    expect(prompts[0]?.arguments).toEqual([
      expect.objectContaining({ name: 'name', required: true }),
      expect.objectContaining({ name: 'style', required: false }),
    ]);
    const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada', style: 'formal' } });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Please greet Ada in a formal style.' } }]);
    const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'style', value: 'f' } });
    expect(completion.completion.values).toEqual(['formal']);
  });

  it('honours logging/setLevel when the log tool sends notifications/message', async () => {
    const messages: LoggingMessageNotification[] = collect(client, 'notifications/message');
    await client.setLoggingLevel('warning');
    expect((await stats(client)).logLevel).toBe('warning');
    expect(await textOf(client, 'log', { level: 'info', message: 'quiet' })).toMatch(/^suppressed/);
    expect(await textOf(client, 'log', { level: 'error', message: 'loud' })).toBe('logged at error');
    expect(messages.map((message) => message.params)).toEqual([{ level: 'error', logger: 'fixture-logger', data: 'loud' }]);
  });

  it('pings the client and hears back', async () => {
    expect(await textOf(client, 'ping_client')).toBe('pong-ok');
  });

  it('announces tools/list_changed when tools are added and removed', async () => {
    const changes = collect(client, 'notifications/tools/list_changed');
    expect(await textOf(client, 'add_tool', { name: 'dynamic_one' })).toBe('added dynamic_one');
    expect(changes).toHaveLength(1);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('dynamic_one');
    expect(await textOf(client, 'dynamic_one')).toBe('dynamic:dynamic_one');
    await textOf(client, 'remove_tool', { name: 'dynamic_one' });
    expect(changes).toHaveLength(2);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('dynamic_one');
  });

  it('announces resources/list_changed when a resource is removed, which is then not found', async () => {
    const changes = collect(client, 'notifications/resources/list_changed');
    expect(await textOf(client, 'remove_resource', { uri: 'fixture://static/blob' })).toBe('removed fixture://static/blob');
    expect(changes).toHaveLength(1);
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toEqual(['fixture://static/hello']);
    const gone = await rejection(client.readResource({ uri: 'fixture://static/blob' }));
    // SDK 2.x servers say "not found" as the 2026 revision does: -32602 naming the URI.
    expect(gone).toMatchObject({ code: ProtocolErrorCode.InvalidParams, data: { uri: 'fixture://static/blob' } });
  });

  it('reports progress from slow and counts a cancelled call in stats', async () => {
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const done = await client.callTool({ name: 'slow', arguments: { ms: 60, steps: 3 } }, { onprogress: (p) => progress.push(p) });
    expect(done.content[0]).toEqual({ type: 'text', text: 'slept 60ms in 3 steps' });
    // The SDK client dispatches notifications a microtask late but responses at
    // once, so the last progress can lose the race against the result when both
    // arrive in one chunk; fixture-process.spec.ts checks the raw stdio order.
    const expected = [1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step} of 3` }));
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress).toEqual(expected.slice(0, progress.length));

    const before = (await stats(client)).cancelled;
    const abort = new AbortController();
    const call = client.callTool(
      { name: 'slow', arguments: { ms: 30_000, steps: 300 } },
      { signal: abort.signal, onprogress: () => abort.abort('test cancels') },
    );
    expect(await rejection(call)).toBeDefined();
    await vi.waitFor(async () => expect((await stats(client)).cancelled).toBe(before + 1), { timeout: 5_000 });
  });
});

describe('the fixture with slow subscriptions (FIXTURE_SUBSCRIBE_DELAY_MS, FIXTURE_UNSUBSCRIBE_DELAY_MS)', () => {
  let fixture: FixtureConnection;

  beforeAll(async () => {
    fixture = await connectToFixture('stdio', { FIXTURE_SUBSCRIBE_DELAY_MS: '60000', FIXTURE_UNSUBSCRIBE_DELAY_MS: '60000' });
  });
  afterAll(() => fixture?.close());

  it('subscribes and unsubscribes on arrival, answers late, and counts an answer cancelled meanwhile', async () => {
    const { client } = fixture;
    const hello = 'fixture://static/hello';
    const abort = new AbortController();
    const subscribing = client.subscribeResource({ uri: hello }, { signal: abort.signal });
    await vi.waitFor(async () => expect((await stats(client)).subscriptions).toEqual([hello]), { timeout: 5_000 });
    abort.abort('test cancels');
    expect(await rejection(subscribing)).toBeDefined();
    await vi.waitFor(async () => expect((await stats(client)).cancelled).toBe(1), { timeout: 5_000 });
    // The cancel came too late to undo it.
    expect((await stats(client)).subscriptions).toEqual([hello]);

    const late = new AbortController();
    const unsubscribing = client.unsubscribeResource({ uri: hello }, { signal: late.signal });
    await vi.waitFor(async () => expect((await stats(client)).subscriptions).toEqual([]), { timeout: 5_000 });
    late.abort('test cancels');
    expect(await rejection(unsubscribing)).toBeDefined();
    await vi.waitFor(async () => expect((await stats(client)).cancelled).toBe(2), { timeout: 5_000 });
  });
});

describe('the fixture with late subscription effects (FIXTURE_SUBSCRIPTION_EFFECT=answer)', () => {
  let fixture: FixtureConnection;

  beforeAll(async () => {
    fixture = await connectToFixture('stdio', { FIXTURE_SUBSCRIPTION_EFFECT: 'answer', FIXTURE_SUBSCRIBE_DELAY_MS: '5000' });
  });
  afterAll(() => fixture?.close());

  it('counts a subscribe on arrival, and it takes effect at the end of its delay even though it was cancelled', async () => {
    const { client } = fixture;
    const hello = 'fixture://static/hello';
    const abort = new AbortController();
    const subscribing = client.subscribeResource({ uri: hello }, { signal: abort.signal });
    await vi.waitFor(async () => expect((await stats(client)).subscribeRequests).toBe(1), { timeout: 5_000 });
    expect(await stats(client)).toMatchObject({ subscriptions: [], subscribes: 0 });
    abort.abort('test cancels');
    expect(await rejection(subscribing)).toBeDefined();
    await vi.waitFor(async () => expect(await stats(client)).toMatchObject({ subscriptions: [hello], subscribes: 1, cancelled: 1 }), {
      timeout: 15_000,
    });
  });
});

describe('the fixture asking its client (stdio)', () => {
  let fixture: FixtureConnection;

  beforeAll(async () => {
    fixture = await connectToFixture('stdio', {}, { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {} } } });
    const client = fixture.client;
    client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
    client.setRequestHandler('sampling/createMessage', async (request) => ({
      role: 'assistant',
      content: { type: 'text', text: `sampled: ${(request.params.messages[0].content as { text: string }).text}` },
      model: 'test-model',
    }));
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
  });
  afterAll(() => fixture?.close());

  it('reports what the client declared, and counts per connection', async () => {
    expect(JSON.parse(await textOf(fixture.client, 'client_capabilities'))).toEqual({ roots: { listChanged: true }, sampling: {}, elicitation: { form: {} } });
    expect(await textOf(fixture.client, 'counter')).toBe('1');
    expect(await textOf(fixture.client, 'counter')).toBe('2');
    await fixture.client.sendRootsListChanged();
    await vi.waitFor(async () => expect((await stats(fixture.client)).rootsChanged).toBe(1));
  });

  it('asks for roots, a sample and a form, and returns the answers', async () => {
    expect(JSON.parse(await textOf(fixture.client, 'list_roots'))).toEqual([{ uri: 'file:///work', name: 'work' }]);
    expect(await textOf(fixture.client, 'ask_sampling', { prompt: 'hi' })).toBe('sampled: hi');
    expect(JSON.parse(await textOf(fixture.client, 'ask_elicitation', { message: 'who?' }))).toEqual({ action: 'accept', content: { name: 'Ada' } });
  });

  it('sends a request with the params given, and returns the answer', async () => {
    const params = { messages: [{ role: 'user', content: { type: 'text', text: 'as given' } }], maxTokens: 5 };
    expect(JSON.parse(await textOf(fixture.client, 'ask_client', { method: 'sampling/createMessage', params }))).toMatchObject({ content: { text: 'sampled: as given' } });
    expect(JSON.parse(await textOf(fixture.client, 'ask_client', { method: 'roots/list' }))).toEqual({ roots: [{ uri: 'file:///work', name: 'work' }] });
  });
});
