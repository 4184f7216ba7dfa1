import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, eventually, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { connectHost, type Host } from './support/hosts.js';

/**
 * Upstreams that break JSON-RPC itself, through the real daemon to a real SDK host: a stdio
 * one (test/fixtures/hostile-upstream.mjs, its tool `raw` writes lines as they are) and a
 * Streamable HTTP one (test/fixtures/raw-http-upstream.mjs, its tool `raw` answers a stream
 * of events as they are) and a legacy HTTP+SSE one (hostile-sse-upstream.mjs, whose `raw`
 * sends them on its event stream). Whatever they send, what they asked gets an answer and what they
 * answered reaches the host, rather than leave either side waiting for a timeout.
 */

let dir: string;
let daemon: DaemonHandle;
let host: Host;
const fixtures: ChildProcess[] = [];

const textOf = (result: unknown) => ((result as { content: Array<{ text?: string }> }).content[0]?.text ?? '') as string;

/** A request the gateway was sent that JSON-RPC does not allow, each with an id it can be answered under. */
const INVALID_REQUESTS = {
  'probe-params': '{"jsonrpc":"2.0","id":"probe-params","method":"roots/list","params":[1]}',
  'probe-method': '{"jsonrpc":"2.0","id":"probe-method","method":""}',
  'probe-version': '{"jsonrpc":"1.0","id":"probe-version","method":"ping"}',
};
/** What each is answered with: MCP's params are named, so a list of them is -32602. */
const REFUSALS = {
  'probe-params': { code: -32602, message: 'Invalid params: MCP params must be an object' },
  'probe-method': { code: -32600, message: 'Invalid request: not a JSON-RPC 2.0 message' },
  'probe-version': { code: -32600, message: 'Invalid request: not a JSON-RPC 2.0 message' },
};
const FINE = '{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"fine"}]}}';

/** Starts an HTTP fixture (it prints `port N`), kept in `fixtures`, and resolves with its URL at `path`. */
function startFixture(file: string, path: string, env: Record<string, string> = {}): Promise<string> {
  const fixture = spawn(process.execPath, [join(REPO_ROOT, 'test/fixtures', file)], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  fixtures.push(fixture);
  return new Promise((resolve, reject) => {
    let out = '';
    fixture.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const found = /port (\d+)/.exec(out);
      if (found) resolve(`http://127.0.0.1:${found[1]}${path}`);
    });
    fixture.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

beforeAll(async () => {
  dir = tempDir('sb-protocol-errors-');
  const url = await startFixture('raw-http-upstream.mjs', '/mcp');
  const sseUrl = await startFixture('hostile-sse-upstream.mjs', '/sse', { HOSTILE_SSE_ACCEPT: '1' });
  const stdio = { command: process.execPath, args: [join(REPO_ROOT, 'test/fixtures/hostile-upstream.mjs')] };
  // A call left unanswered fails at 60 s, past the tests' own timeout: a hang shows as a failure.
  daemon = await startDaemon(writeConfig({ mcpServers: { piped: stdio, calm: stdio, posted: { type: 'http', url }, legacy: { type: 'sse', url: sseUrl } } }, dir));
  host = await connectHost('streamable-http', { daemon });
  await eventually(async () => {
    const names = (await host.client.listTools()).tools.map((t) => t.name);
    return ['piped__raw', 'calm__echo', 'posted__raw', 'legacy__raw'].every((n) => names.includes(n)) || undefined;
  }, 60_000, 'every upstream listed');
}, 90_000);

afterAll(async () => {
  await host?.close();
  await stopAllDaemons();
  for (const fixture of fixtures) fixture.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Reply = { id: string; result?: unknown; error?: { code: number; message: string } };

/**
 * What the upstream was answered under `ids`, once each has an answer: exactly one each. The
 * upstream is asked once more after all have come, so that a second answer to one (sent with
 * the first, as when two handlers take each message: legacy-sse-messages.ts) has arrived too.
 */
async function repliesOf(tool: string, ids: string[]): Promise<Reply[]> {
  const read = async () => {
    const { replies } = JSON.parse(textOf(await host.client.callTool({ name: tool, arguments: {} }))) as { replies: Reply[] };
    return replies.filter((r) => ids.includes(r.id));
  };
  await eventually(
    async () => {
      const got = await read();
      return ids.every((id) => got.some((r) => r.id === id)) || undefined;
    },
    30_000,
    `answers to ${ids.join(', ')}`,
  );
  const got = await read();
  expect(got.map((r) => r.id).sort(), 'one answer to each').toEqual([...ids].sort());
  return got;
}

describe('a stdio upstream that writes a batch (a JSON array) to stdout', () => {
  it('has the answer in it reach the host, not left to time out', async () => {
    const batch = '[{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"batched"}]}}]';
    const answer = await host.client.callTool({ name: 'piped__raw', arguments: { lines: [batch] } }, { timeout: 30_000 });
    expect(textOf(answer)).toBe('batched');
  }, 40_000);

  it('has the requests in it answered, each as it would be alone', async () => {
    const batch = '[{"jsonrpc":"2.0","id":"probe-ping","method":"ping"},{"jsonrpc":"2.0","id":"probe-unknown","method":"no/such"}]';
    expect(textOf(await host.client.callTool({ name: 'piped__raw', arguments: { lines: [batch, FINE] } }))).toBe('fine');
    const replies = await repliesOf('piped__stats', ['probe-ping', 'probe-unknown']);
    expect(replies.find((r) => r.id === 'probe-ping')).toMatchObject({ result: {} });
    expect(replies.find((r) => r.id === 'probe-unknown')).toMatchObject({ error: { code: -32601 } });
  }, 40_000);
});

describe.each([
  ['stdio', 'piped', 'lines'],
  ['Streamable HTTP', 'posted', 'events'],
  ['legacy HTTP+SSE', 'legacy', 'events'],
])('a %s upstream that sends a request JSON-RPC does not allow, with an id', (_transport, server, field) => {
  it('has it answered -32600 (-32602 for params that are a list) under that id, and its call still answered', async () => {
    const sent = [...Object.values(INVALID_REQUESTS), FINE];
    expect(textOf(await host.client.callTool({ name: `${server}__raw`, arguments: { [field]: sent } }))).toBe('fine');
    const replies = await repliesOf(`${server}__stats`, Object.keys(INVALID_REQUESTS));
    for (const reply of replies) expect(reply.error, reply.id).toMatchObject(REFUSALS[reply.id as keyof typeof REFUSALS]);
    expect(textOf(await host.client.callTool({ name: 'calm__echo', arguments: {} }))).toBe('echo');
  }, 60_000);
});

describe('a Streamable HTTP upstream that sends an event that is no JSON, quoting a secret', () => {
  it('has it logged with the secret redacted, as a stdio upstream\'s stray line is', async () => {
    const event = 'not json: login as admin with password=hunter2-hunter2 failed';
    expect(textOf(await host.client.callTool({ name: 'posted__raw', arguments: { events: [event, FINE] } }))).toBe('fine');
    const logged = await eventually(
      () => daemon.stderr().split('\n').find((l) => l.includes('upstream sent something that is not JSON') && l.includes('login as admin')),
      30_000,
      'the event logged',
    );
    expect(logged).not.toContain('hunter2-hunter2');
  }, 60_000);
});

describe('a Streamable HTTP upstream that sends 20,000 events that are no messages on one call\'s stream', () => {
  it('has at most 100 of them a second logged, the rest counted, and the call still answered', async () => {
    const started = Date.now();
    const junk = Array.from({ length: 20_000 }, (_, i) => (i % 2 === 0 ? `not json ${i}` : `{"not":"a message","i":${i}}`));
    expect(textOf(await host.client.callTool({ name: 'posted__raw', arguments: { events: [...junk, FINE] } }))).toBe('fine');
    await eventually(() => /upstream messages: [\d,]+ stray messages? not logged/.test(daemon.stderr()), 30_000, 'the count of messages not logged');
    const logged = daemon
      .stderr()
      .split('\n')
      .filter((l) => /upstream sent something that is not (JSON|a JSON-RPC message)/.test(l)).length;
    // Before, each one was a line of the daemon's log.
    const seconds = Math.ceil((Date.now() - started) / 1000);
    expect(logged).toBeLessThanOrEqual(100 * (seconds + 1));
  }, 60_000);
});

describe('a Streamable HTTP upstream that answers a call with a content type that is neither JSON nor an event stream', () => {
  it('fails the call with -32000 naming that content type, not as an upstream that could not be reached', async () => {
    for (const [type, named] of [['text/html; charset=utf-8', "content type 'text/html'"], [undefined, 'no content type']]) {
      const failure = await host.client
        .callTool({ name: 'posted__raw', arguments: { http: { type, body: '<html>Welcome to the proxy</html>' } } })
        .then(() => undefined, (e: { code?: number; message?: string }) => e);
      expect(failure?.code).toBe(-32000);
      expect(failure?.message).toContain(`Upstream 'posted' answered with ${named}, not JSON or an event stream`);
    }
    expect(textOf(await host.client.callTool({ name: 'posted__raw', arguments: { events: [FINE] } }))).toBe('fine');
  }, 60_000);
});

describe('a legacy HTTP+SSE upstream that answers in a shape JSON-RPC does not allow, or in a batch', () => {
  it('has the call fail at once with -32000, or get the batched answer, as the other transports do, rather than time out', async () => {
    const both = '{"jsonrpc":"2.0","id":$ID,"result":{"content":[]},"error":{"code":-32000,"message":"both"}}';
    const failure = await host.client
      .callTool({ name: 'legacy__raw', arguments: { events: [both] } }, { timeout: 30_000 })
      .then(() => undefined, (e: { code?: number; message?: string }) => e);
    expect(failure).toMatchObject({ code: -32000, message: expect.stringContaining('The upstream sent an invalid response') });
    const batch = '[{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"batched"}]}}]';
    expect(textOf(await host.client.callTool({ name: 'legacy__raw', arguments: { events: [batch] } }, { timeout: 30_000 }))).toBe('batched');
  }, 90_000);
});
