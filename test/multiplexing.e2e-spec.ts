import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturePath } from '@switchboard/testing';
import { REPO_ROOT, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { rawHost } from './support/raw-host.js';
import { openStream } from './support/sse-client.js';

/**
 * What the gateway multiplexes: several hosts' requests over one shared upstream connection.
 * JSON-RPC ids and progress tokens are the sender's own (the spec: a request id unique only
 * within the sender's session, a progress token unique among its active requests), so two
 * hosts may use the same ones at once, and a string id "1" is not the number 1. Answers,
 * progress and cancellations must reach exactly the request they belong to.
 */

type Message = Record<string, unknown>;
type Host = Awaited<ReturnType<typeof rawHost>>;

let daemon: DaemonHandle;
const hosts: Host[] = [];

beforeAll(async () => {
  const dir = tempDir();
  // Sampling is refused unless a rule allows it; the inbox would take what no host can answer.
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, 'everyone: [sampler]\nroles:\n  sampler:\n    - { id: sampling-ok, allow: sample, server: "*" }\n');
  const config = writeConfig(
    {
      policy: { file: policy },
      relay: { inbox: false },
      mcpServers: {
        fx: { command: process.execPath, args: [fixturePath('stdio')] },
        fy: { command: process.execPath, args: [fixturePath('stdio')], env: { FIXTURE_NAME: 'fy' } },
        late: { command: process.execPath, args: [join(REPO_ROOT, 'test/fixtures/hostile-upstream.mjs')] },
      },
    },
    dir,
  );
  daemon = await startDaemon(config);
}, 60_000);

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  await stopAllDaemons();
});

const newHost = async () => {
  const host = await rawHost(daemon, {});
  hosts.push(host);
  return host;
};

/** A tools/call of fx's slow tool: `ms` in `steps`, with a progress token when given. */
const slow = (id: string | number, ms: number, steps: number, progressToken?: string | number): Message => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'fx__slow', arguments: { ms, steps }, ...(progressToken !== undefined && { _meta: { progressToken } }) },
});

const resultOf = (messages: Message[], id: unknown) => messages.find((m) => m.id === id && 'result' in m)?.result;
const progressOf = (messages: Message[]) => messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params as Message);
const cancel = (host: Host, requestId: string | number) => host.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'test' } }).status;
/** fx's counters: how many of its slow calls a notifications/cancelled ended. */
const cancelNotices = async (host: Host) => {
  const reply = host.post({ jsonrpc: '2.0', id: 'stats', method: 'tools/call', params: { name: 'fx__stats', arguments: {} } });
  await reply.ended;
  const text = (resultOf(reply.messages, 'stats') as { content: { text: string }[] }).content[0].text;
  return (JSON.parse(text) as { cancelNotices: number }).cancelNotices;
};

describe('two hosts, one shared upstream', () => {
  it('the same id and the same progress token at once: each host gets its own answer and progress, under its own token', async () => {
    const [a, b] = [await newHost(), await newHost()];
    const ra = a.post(slow(1, 600, 3, 7));
    const rb = b.post(slow(1, 300, 2, 7));
    await Promise.all([ra.ended, rb.ended]);
    expect(resultOf(ra.messages, 1)).toEqual({ content: [{ type: 'text', text: 'slept 600ms in 3 steps' }] });
    expect(resultOf(rb.messages, 1)).toEqual({ content: [{ type: 'text', text: 'slept 300ms in 2 steps' }] });
    // The number 7 comes back as the number 7, and each host only hears of its own call's steps.
    expect(progressOf(ra.messages).map((p) => [p.progressToken, p.total])).toEqual([[7, 3], [7, 3], [7, 3]]);
    expect(progressOf(rb.messages).map((p) => [p.progressToken, p.total])).toEqual([[7, 2], [7, 2]]);
  });

  it("one host's notifications/cancelled for id 5 cancels its own call, not the other host's id 5", async () => {
    const [a, b] = [await newHost(), await newHost()];
    const before = await cancelNotices(a);
    const ra = a.post(slow(5, 5_000, 50, 'a'));
    const rb = b.post(slow(5, 1_500, 3, 'b'));
    // Cancelled once the upstream is demonstrably running both.
    await Promise.all([a.waitFor([ra], (m) => m.method === 'notifications/progress'), b.waitFor([rb], (m) => m.method === 'notifications/progress')]);
    expect(await cancel(a, 5)).toBe(202);
    await Promise.all([ra.ended, rb.ended]);
    expect(ra.messages.some((m) => m.id === 5)).toBe(false);
    expect(resultOf(rb.messages, 5)).toEqual({ content: [{ type: 'text', text: 'slept 1500ms in 3 steps' }] });
    expect(await cancelNotices(a)).toBe(before + 1);
  });

  it('a cancellation for an id never sent, or already answered, is ignored and the session goes on', async () => {
    const a = await newHost();
    const done = a.post(slow(9, 0, 1));
    await done.ended;
    expect(await cancel(a, 9)).toBe(202);
    expect(await cancel(a, 'never-sent')).toBe(202);
    const next = a.post({ jsonrpc: '2.0', id: 10, method: 'ping' });
    await next.ended;
    expect(next.messages).toEqual([{ jsonrpc: '2.0', id: 10, result: {} }]);
  });
});

describe('one host, the ids 1 and "1" at once', () => {
  it('are two requests: both are answered, each under its own id, and cancelling "1" leaves 1 running', async () => {
    const a = await newHost();
    const before = await cancelNotices(a);
    const numeric = a.post(slow(1, 1_500, 3, 'n'));
    const text = a.post(slow('1', 5_000, 50, 's'));
    await Promise.all([a.waitFor([numeric], (m) => m.method === 'notifications/progress'), a.waitFor([text], (m) => m.method === 'notifications/progress')]);
    expect(await cancel(a, '1')).toBe(202);
    await Promise.all([numeric.ended, text.ended]);
    expect(resultOf(numeric.messages, 1)).toEqual({ content: [{ type: 'text', text: 'slept 1500ms in 3 steps' }] });
    expect(text.messages.some((m) => m.id === '1')).toBe(false);
    expect(await cancelNotices(a)).toBe(before + 1);
  });
});

describe('progress the host did not ask for (legacy HTTP+SSE, where every message shares one stream)', () => {
  it("an upstream's progress for a token nobody gave it, and for a call it already answered, reaches no host", async () => {
    const stream = await openStream(daemon.sseUrl, { Accept: 'text/event-stream' });
    try {
      const [, endpoint] = await stream.waitFor(/event: endpoint\ndata: (\S+)/);
      const send = (message: Message) =>
        fetch(new URL(endpoint, daemon.baseUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) });
      await send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'sse', version: '1' } } });
      await stream.waitFor(/"id":0,"result"/);
      await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const call = (id: number) => send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'late__progress_late', arguments: {}, _meta: { progressToken: `t${id}` } } });
      await call(1);
      await stream.waitFor(/"id":1,"result"/);
      // The upstream wrote its late progress for call 1 before it answers call 2, and the
      // gateway reads it in order: once call 2's answer is here, any relayed late one would be.
      await call(2);
      await stream.waitFor(/"id":2,"result"/);
      const progress = stream
        .text()
        .split('\n')
        .filter((line) => line.startsWith('data:') && line.includes('notifications/progress'))
        .map((line) => (JSON.parse(line.slice(5)) as { params: Message }).params);
      expect(progress).toEqual([
        { progressToken: 't1', progress: 1, message: 'in time' },
        { progressToken: 't2', progress: 1, message: 'in time' },
      ]);
    } finally {
      stream.close();
    }
  });
});

describe('two upstreams asking one host at once, with the same progress token', () => {
  it('the host gets a token unique among the requests the gateway has open with it, and its progress reaches each upstream under that upstream\'s own', async () => {
    const client = new Client({ name: 'sampler', version: '1' }, { capabilities: { sampling: {} } });
    const tokens: unknown[] = [];
    let bothAsked!: () => void;
    const asked = new Promise<void>((resolve) => (bothAsked = resolve));
    client.setRequestHandler('sampling/createMessage', async (request, extra) => {
      const token = request.params._meta?.progressToken;
      tokens.push(token);
      if (tokens.length === 2) bothAsked();
      // Both are open at once when the host reports on them.
      await asked;
      if (token !== undefined) await extra.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } });
      return { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'm' };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl)));
    try {
      const params = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5, _meta: { progressToken: 0 } };
      // fx asks with the token 0 as given; fy asks for progress (its SDK picks its own token).
      const [fromFx, fromFy] = await Promise.all([
        client.callTool({ name: 'fx__ask_client', arguments: { method: 'sampling/createMessage', params } }),
        client.callTool({ name: 'fy__ask_client', arguments: { method: 'sampling/createMessage', params, progress: true } }),
      ]);
      expect(tokens).toHaveLength(2);
      expect(tokens[0]).not.toBeUndefined();
      expect(tokens[0]).not.toEqual(tokens[1]);
      const text = (result: unknown) => (result as { content: { text: string }[] }).content[0].text;
      expect(JSON.parse(text(fromFx))).toMatchObject({ model: 'm', content: { text: 'sampled' } });
      expect(JSON.parse(text(fromFy))).toEqual({
        answer: { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'm' },
        progress: [{ progress: 1, total: 2 }],
      });
    } finally {
      await client.close();
    }
  });
});

describe("a host's progress on a relayed question, in a flood", () => {
  it('reaches the upstream (which other hosts may share) at most 20 a second', async () => {
    const client = new Client({ name: 'flooder', version: '1' }, { capabilities: { sampling: {} } });
    const SENT = 300;
    client.setRequestHandler('sampling/createMessage', async (request, extra) => {
      const progressToken = request.params._meta?.progressToken;
      if (progressToken !== undefined) {
        for (let i = 1; i <= SENT; i++) await extra.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: i } });
      }
      return { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'm' };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl)));
    try {
      const params = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 };
      const started = Date.now();
      const result = await client.callTool({ name: 'fy__ask_client', arguments: { method: 'sampling/createMessage', params, progress: true } });
      const seconds = Math.ceil((Date.now() - started) / 1000);
      const { progress } = JSON.parse((result as { content: { text: string }[] }).content[0].text) as { progress: { progress: number }[] };
      expect(progress.length).toBeGreaterThan(0);
      expect(progress[0]).toEqual({ progress: 1 });
      expect(progress.length).toBeLessThanOrEqual(20 * (seconds + 1));
      expect(progress.length).toBeLessThan(SENT);
    } finally {
      await client.close();
    }
  });
});
