import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { REPO_ROOT, eventually, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { connectHost, type Host } from './support/hosts.js';
import { rawHost } from './support/raw-host.js';

type Params = Record<string, unknown>;

/** The hand-written upstream, speaking only `version`, with a strict schema; it records what it is sent. */
const upstreamOn = (version: string) => ({
  command: process.execPath,
  args: [join(REPO_ROOT, 'test/fixtures/upstream-older-revision.mjs')],
  env: { LEGACY_VERSION: version },
});

const VERSIONS = { u1105: '2024-11-05', u0326: '2025-03-26', u0618: '2025-06-18' } as const;

afterAll(stopAllDaemons);

/**
 * The real daemon in front of upstreams pinned to older revisions, each with a schema that
 * refuses fields its revision does not define, and a 2025-11-25 host: what the host sends
 * reaches each upstream as the upstream's revision defines the request.
 */
describe("requests forwarded to an upstream take the shape of the upstream's revision", () => {
  let daemon: DaemonHandle;
  let host: Host;

  beforeAll(async () => {
    const servers = Object.fromEntries(Object.entries(VERSIONS).map(([name, version]) => [name, upstreamOn(version)]));
    daemon = await startDaemon(writeConfig({ namespace: 'prefix', mcpServers: servers }, tempDir()));
    host = await connectHost('streamable-http', { daemon });
    await eventually(async () => (await host.client.listPrompts()).prompts.length === Object.keys(VERSIONS).length || undefined);
  });
  afterAll(async () => host?.close());

  /** What the upstream `server` was sent as completion/complete params, in order. */
  const received = async (server: string): Promise<Params[]> => {
    const result = (await host.client.callTool({ name: `${server}__received`, arguments: {} })) as { content: { text: string }[] };
    return JSON.parse(result.content[0].text) as Params[];
  };
  // A prompt reference's title (BaseMetadata's, 2025-06-18) is in the spec's schema, not the SDK's type.
  const titled = (name: string) => ({ type: 'ref/prompt', name, title: 'Greeting' }) as { type: 'ref/prompt'; name: string };
  const complete = (server: string) =>
    host.client.complete({
      ref: titled(`${server}__greet`),
      argument: { name: 'name', value: 'al' },
      context: { arguments: { salutation: 'Dear' } },
    });

  it.each([
    ['u1105', '2024-11-05'],
    ['u0326', '2025-03-26'],
  ])('completion/complete reaches a %s upstream (%s) without the context and prompt title 2025-06-18 added, and is answered', async (server) => {
    expect((await complete(server)).completion.values).toEqual(['albert', 'alice']);
    expect(await received(server)).toEqual([{ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'al' } }]);
  });

  it('completion/complete reaches a 2025-06-18 upstream with its context and prompt title', async () => {
    expect((await complete('u0618')).completion.values).toEqual(['albert', 'alice']);
    expect(await received('u0618')).toEqual([
      { ref: { type: 'ref/prompt', name: 'greet', title: 'Greeting' }, argument: { name: 'name', value: 'al' }, context: { arguments: { salutation: 'Dear' } } },
    ]);
  });
});

type ToolResult = { content: { type: string; text: string }[]; isError?: boolean };

/**
 * The same upstreams asking their client to sample while a tool call runs, answered by a
 * 2025-11-25 host written against the wire (the SDK's host checks its own answers against
 * its schema, which is narrower than the spec's): the answer reaches each upstream as its
 * revision defines a CreateMessageResult (one block, of a kind it knows), or, when it cannot
 * be said there, the upstream gets an error saying so.
 */
describe("a host's answers to relayed requests take the shape of the upstream's revision", () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  let host: Awaited<ReturnType<typeof rawHost>>;
  let ids = 0;

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, 'everyone: [sampler]\nroles:\n  sampler:\n    - { id: sampling-ok, allow: sample }\n');
    const servers = Object.fromEntries(Object.entries(VERSIONS).map(([name, version]) => [name, upstreamOn(version)]));
    daemon = await startDaemon(writeConfig({ namespace: 'prefix', policy: { file: policyFile }, mcpServers: servers }, dir));
    const lister = await connectHost('streamable-http', { daemon });
    await eventually(async () => (await lister.client.listTools()).tools.filter((t) => t.name.endsWith('__ask_client')).length === 3 || undefined);
    await lister.close();
    host = await rawHost(daemon, { sampling: {} });
  });
  afterAll(async () => host?.close());

  /** `server`'s ask_client asks for a sample, the host answers `content`; what the tool answered. */
  async function sampled(server: string, content: unknown): Promise<ToolResult> {
    const id = ++ids;
    const params = { messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }], maxTokens: 10 };
    const call = host.post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: `${server}__ask_client`, arguments: { method: 'sampling/createMessage', params } } });
    const question = await host.waitFor([call], (m) => m.method === 'sampling/createMessage', 30_000);
    await host.post({ jsonrpc: '2.0', id: question.id, result: { role: 'assistant', content, model: 'm' } }).ended;
    const reply = await host.waitFor([call], (m) => m.id === id && m.method === undefined, 30_000);
    if (!reply.result) throw new Error(`the call failed: ${JSON.stringify(reply)}`);
    return reply.result as ToolResult;
  }
  const text = (t: string) => ({ type: 'text', text: t });
  const audio = { type: 'audio', data: 'AA==', mimeType: 'audio/wav' };

  it('a list of one block reaches a 2024-11-05 upstream as that block', async () => {
    const result = await sampled('u1105', [text('hi')]);
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(result.content[0].text)).toEqual({ role: 'assistant', content: text('hi'), model: 'm' });
  });

  it('an answer its revision cannot say is an error for the upstream, not part of the answer, audited as such', async () => {
    const result = await sampled('u1105', audio);
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toBe("client error -32603: The host's answer to sampling/createMessage cannot be given in MCP 2024-11-05, which has no audio content in a sampling result");
    const row = auditRows(dataDir, "method = 'sampling/createMessage' AND upstream = ?", 'u1105').at(-1);
    expect(row).toMatchObject({ decision: 'allowed', rule: 'relay:upstream-revision', outcome: 'error', error_code: -32603 });
  });

  // No revision before 2025-11-25 can offer tools, and a request without tools is answered
  // with one block in every revision: these are refused as answers the request ruled out.
  it.each([
    ['u1105', [text('hi'), text('there')], 'content must be one block when the request offered no tools (it has 2)'],
    ['u0618', [{ type: 'tool_use', id: 't1', name: 'lookup', input: {} }], 'content may not hold tool_use blocks when the request offered no tools'],
  ])('%s: an answer the request ruled out (%j) is an error for the upstream, audited as such', async (server, content, problem) => {
    const result = await sampled(server, content);
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toBe(`client error -32603: The host's answer to sampling/createMessage is invalid: ${problem}`);
    const row = auditRows(dataDir, "method = 'sampling/createMessage' AND upstream = ?", server).at(-1);
    expect(row).toMatchObject({ decision: 'allowed', rule: 'relay:invalid-answer', outcome: 'error', error_code: -32603 });
  });

  it('audio reaches a 2025-06-18 upstream, whose revision has it', async () => {
    const result = await sampled('u0618', [audio]);
    expect(JSON.parse(result.content[0].text)).toEqual({ role: 'assistant', content: audio, model: 'm' });
  });
});

/**
 * A resource link from an upstream that serves no resources (no `resources` capability) is for
 * the host to resolve itself: rewritten to a gateway URI it would route back to a server that
 * answers resources/read with -32601, for a method the gateway itself offers.
 */
describe('an upstream that serves no resources', () => {
  let dir: string;
  let daemon: DaemonHandle;
  let host: Host;

  beforeAll(async () => {
    const plain = { ...upstreamOn('2025-06-18'), env: { LEGACY_VERSION: '2025-06-18', LEGACY_TOOLS_ONLY: '1' } };
    dir = tempDir();
    daemon = await startDaemon(writeConfig({ namespace: 'prefix', mcpServers: { plain, other: upstreamOn('2025-06-18') } }, dir));
    host = await connectHost('streamable-http', { daemon });
    await eventually(async () => (await host.client.listTools()).tools.length === 8 || undefined);
  });
  afterAll(async () => host?.close());

  it('its resource links reach the host as it sent them, and a gateway URI naming it is not found (-32002)', async () => {
    const result = (await host.client.callTool({ name: 'plain__link', arguments: {} })) as { content: Params[] };
    expect(result.content).toEqual([{ type: 'resource_link', uri: 'file:///notes.txt', name: 'notes' }]);
    const error = await host.client.readResource({ uri: 'switchboard://plain/file:///notes.txt' }).then(
      () => undefined,
      (err: unknown) => err as { code: number; message: string },
    );
    expect(error).toMatchObject({ message: 'Resource not found: switchboard://plain/file:///notes.txt' });
    // As for any URI no upstream serves: -32002 on the wire (the SDK client renames the code).
    const [row] = await eventually(() => {
      const rows = auditRows(join(dir, 'data'), `method = 'resources/read'`);
      return rows.length > 0 ? rows : undefined;
    });
    expect(row).toMatchObject({ decision: 'denied', rule: 'catalog:unknown-resource', error_code: -32002 });
  });
});
