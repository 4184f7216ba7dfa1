import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { REPO_ROOT, eventually, stdioFixture } from './support/daemon.js';
import { initialize, launch, spawnHost, stopAllHosts, type Line, type RawHost } from './support/stdio-host.js';

/**
 * `switchboard stdio` byte by byte: a raw host writes newline-delimited JSON to the gateway's
 * stdin and reads every line of its stdout, against a real stdio fixture upstream. How it
 * ends (the host going away, signals): stdio-shutdown.e2e-spec.ts.
 */

afterEach(stopAllHosts);

const isBatch = (l: Line): l is Record<string, unknown>[] => Array.isArray(l);

describe('switchboard stdio: JSON-RPC batches (2025-03-26)', () => {
  it('answers a batch with one array; progress for its requests comes first, alone; single messages stay single', async () => {
    const host = await launch('2025-03-26');
    const from = host.lines.length;
    host.send([
      { jsonrpc: '2.0', id: 20, method: 'ping' },
      { jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 300, steps: 2 }, _meta: { progressToken: 'bp' } } },
      { jsonrpc: '2.0', id: 22, method: 'tools/call', params: { name: 'fx__no_such_tool', arguments: {} } },
      { bogus: true },
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
    ]);
    const reply = (await host.next(isBatch, from)) as Record<string, unknown>[];
    const before = host.lines.slice(from, host.lines.indexOf(reply));
    expect(reply).toHaveLength(4);
    expect(reply).toEqual(
      expect.arrayContaining([
        { jsonrpc: '2.0', id: 20, result: {} },
        expect.objectContaining({ id: 21, result: expect.objectContaining({ content: [{ type: 'text', text: 'slept 300ms in 2 steps' }] }) }),
        expect.objectContaining({ id: 22, error: expect.objectContaining({ code: -32602 }) }),
        expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) }),
      ]),
    );
    // Everything before the array is progress for request 21, each message on its own line.
    expect(before.length).toBeGreaterThan(0);
    for (const line of before) expect(line).toMatchObject({ method: 'notifications/progress', params: { progressToken: 'bp' } });

    const after = host.lines.length;
    host.send({ jsonrpc: '2.0', id: 30, method: 'ping' });
    expect(await host.next((l) => !isBatch(l) && l.id === 30, after)).toEqual({ jsonrpc: '2.0', id: 30, result: {} });
    host.send({ bogus: true });
    expect(await host.next((l) => !isBatch(l) && l.id === null, after)).toMatchObject({ error: { code: -32600 } });
    expect(host.lines.slice(from).filter(isBatch)).toHaveLength(1);
  });

  it('sends nothing for a batch of notifications, and stops waiting for a request the host cancels', async () => {
    const host = await launch('2025-03-26');
    const from = host.lines.length;
    host.send([{ jsonrpc: '2.0', method: 'notifications/roots/list_changed' }]);
    host.send([
      { jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 20_000 } } },
      { jsonrpc: '2.0', id: 'c2', method: 'ping' },
    ]);
    // A later ping's answer proves both batches were read (stdin is taken in order, a ping
    // answered at once): whatever they were to send before the cancel would be on stdout by now.
    host.send({ jsonrpc: '2.0', id: 'later', method: 'ping' });
    await host.next((l) => !isBatch(l) && l.id === 'later', from);
    expect(host.lines.slice(from)).toEqual([{ jsonrpc: '2.0', id: 'later', result: {} }]);
    const cancelFrom = host.lines.length;
    host.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c1', reason: 'test' } });
    expect(await host.next(isBatch, cancelFrom)).toEqual([{ jsonrpc: '2.0', id: 'c2', result: {} }]);
    expect(host.lines.slice(cancelFrom)).toHaveLength(1);
  });

  it('sends what a batch has when the host closes stdin before every request is answered', async () => {
    const host = await launch('2025-03-26');
    const from = host.lines.length;
    host.send([
      { jsonrpc: '2.0', id: 's1', method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 20_000 } } },
      { jsonrpc: '2.0', id: 's2', method: 'ping' },
    ]);
    // The batch is read (a later ping is answered) before stdin closes: else the test would
    // only show what a gateway that never read the batch sends.
    host.send({ jsonrpc: '2.0', id: 'later', method: 'ping' });
    await host.next((l) => !isBatch(l) && l.id === 'later', from);
    host.proc.stdin.end();
    await host.exited;
    expect(host.lines.slice(from)).toEqual([{ jsonrpc: '2.0', id: 'later', result: {} }, [{ jsonrpc: '2.0', id: 's2', result: {} }]]);
  });

  it('2025-06-18 refuses a batch with one -32600', async () => {
    const host = await launch('2025-06-18');
    const from = host.lines.length;
    host.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect(await host.next(() => true, from)).toMatchObject({ id: null, error: { code: -32600 } });
  });
});

describe('switchboard stdio: a host that does not wait for the initialize answer', () => {
  it('has its requests answered after initialize, against the upstreams initialize waited for', async () => {
    // The upstream takes 1.5 s to have its tools read; initialize waits for that (up to 5 s).
    const host = spawnHost(stdioFixture({ FIXTURE_TOOLS_LIST_DELAY_MS: '1500' }));
    host.send(initialize('init', '2025-06-18'));
    host.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    host.send({ jsonrpc: '2.0', id: 'early-call', method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'early' } } });
    host.send({ jsonrpc: '2.0', id: 'early-list', method: 'tools/list' });
    const call = await host.next((l) => !Array.isArray(l) && l.id === 'early-call');
    expect(call).toMatchObject({ result: { content: [{ type: 'text', text: 'early' }] } });
    const list = (await host.next((l) => !Array.isArray(l) && l.id === 'early-list')) as { result: { tools: { name: string }[] } };
    expect(list.result.tools.map((t) => t.name)).toContain('fx__echo');
    // And the initialize answer came first.
    const order = host.lines.map((l) => (Array.isArray(l) ? undefined : l.id));
    expect(order.indexOf('init')).toBeLessThan(order.indexOf('early-call'));
  });
});

describe('switchboard stdio: a host that cancels its initialize', () => {
  it('still gets the answer (the spec lets no client cancel initialize), and its session works', async () => {
    const host = spawnHost(stdioFixture());
    // One write: the cancel arrives while initialize still waits for the upstream.
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'init', reason: 'changed my mind' } };
    host.proc.stdin.write(`${JSON.stringify(initialize('init', '2025-06-18'))}\n${JSON.stringify(cancel)}\n`);
    expect(await host.next((l) => !Array.isArray(l) && l.id === 'init')).toMatchObject({ result: { protocolVersion: '2025-06-18' } });
    host.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    host.send({ jsonrpc: '2.0', id: 'after', method: 'tools/list' });
    expect(await host.next((l) => !Array.isArray(l) && l.id === 'after')).toMatchObject({ result: { tools: expect.any(Array) } });
  });
});

describe('switchboard stdio: a host that stops reading stdout', () => {
  it('is no longer read from while it leaves more than 16 MiB unread, and gets every answer once it reads again', async () => {
    const host = await launch('2025-06-18');
    const from = host.lines.length;
    host.proc.stdout.pause();
    // Answers of 1 MiB each: without a bound the gateway would hold every one in memory.
    const text = 'y'.repeat(1024 * 1024);
    const call = (id: number) => host.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'fx__echo', arguments: { text } } });
    for (let id = 1; id <= 20; id++) call(id);
    await eventually(() => host.stderr().includes('the host is not reading stdout: stopped reading stdin until it does'), 30_000, 'stdin held');
    // Sent while stdin is not read: they wait in the pipe and in the host, to be read once it drains.
    const count = 40;
    for (let id = 21; id <= count; id++) call(id);
    expect(host.proc.stdin.writableLength).toBeGreaterThan(0);

    host.proc.stdout.resume();
    await eventually(() => host.lines.length - from >= count, 60_000, 'every answer');
    const answers = host.lines.slice(from) as { id: number; result: { content: { text: string }[] } }[];
    expect(answers.map((a) => a.id).sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    for (const a of answers) expect(a.result.content[0].text.length).toBe(text.length);
  });
});

/** A host with the roots capability whose fx__list_roots call (id 'call') waits on the roots/list it was just asked; `from`: its first line after initialize. */
async function askedForRoots(): Promise<{ host: RawHost; from: number; ask: { id: number } }> {
    const host = spawnHost(stdioFixture());
    host.send({ ...initialize('init', '2025-06-18'), params: { protocolVersion: '2025-06-18', capabilities: { roots: {} }, clientInfo: { name: 'raw', version: '1' } } });
    await host.next((l) => !Array.isArray(l) && l.id === 'init');
    host.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const from = host.lines.length;
    host.send({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'fx__list_roots', arguments: {} } });
    const ask = (await host.next((l) => !Array.isArray(l) && l.method === 'roots/list', from)) as { id: number };
  return { host, from, ask };
}

describe('switchboard stdio: a host that answers a relayed request in a shape JSON-RPC does not allow', () => {
  it('is not answered under that id (its own requests may use it), and the relayed request fails at once', async () => {
    const { host, from, ask } = await askedForRoots();
    host.send({ jsonrpc: '2.0', id: ask.id, result: null });

    const answer = (await host.next((l) => !Array.isArray(l) && l.id === 'call', from)) as { result: { content: { text: string }[]; isError?: boolean } };
    // The fixture reports what its roots/list got: the gateway's error for the bad answer, not its 10 s timeout.
    expect(answer.result.content[0].text).toMatch(/^failed: .*invalid response/);
    // Nothing came back under the gateway's own request id: a host whose request had that id would take it as its answer.
    expect(host.lines.slice(from).filter((l) => !Array.isArray(l) && l.id === ask.id)).toEqual([ask]);
  });
});

describe('switchboard stdio: a host that answers a relayed request with JSON nested thousands of levels deep', () => {
  it('has the answer refused as invalid, with an audit row, and the upstream told why, not an internal error', async () => {
    const { host, from, ask } = await askedForRoots();
    // Deep enough to overflow the stack of any recursive walk (JSON.stringify's included); far within the line limit.
    const depth = 100_000;
    host.proc.stdin.write(`{"jsonrpc":"2.0","id":${ask.id},"result":{"roots":[{"uri":"file:///deep","_meta":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}]}}\n`);

    const answer = (await host.next((l) => !Array.isArray(l) && l.id === 'call', from)) as { result: { content: { text: string }[] } };
    // The fixture reports what its roots/list got.
    expect(answer.result.content[0].text).toBe("failed: The host's answer to roots/list is invalid: it nests deeper than 256 levels");
    const rows = await eventually(() => auditRows(host.dataDir, `method = 'roots/list'`).at(0), 15_000, 'the roots/list row');
    expect(rows).toMatchObject({ decision: 'allowed', rule: 'relay:invalid-answer', outcome: 'error', error_code: -32603, upstream: 'fx' });
    expect(host.stderr()).not.toContain('Maximum call stack');
    host.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    expect(await host.next((l) => !Array.isArray(l) && l.id === 'after', from)).toEqual({ jsonrpc: '2.0', id: 'after', result: {} });
  });
});

describe('switchboard stdio: an upstream that pretty-prints its JSON', () => {
  it('has each of its answers reach the host as one line of JSON', async () => {
    const upstream = spawn(process.execPath, [join(REPO_ROOT, 'test/fixtures/upstream-pretty-json.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const port = await new Promise<string>((resolve, reject) => {
        upstream.stdout.setEncoding('utf8');
        upstream.stdout.on('data', (chunk: string) => {
          const m = /LISTENING (\d+)/.exec(chunk);
          if (m) resolve(m[1]);
        });
        upstream.once('exit', (code) => reject(new Error(`the upstream exited with ${code}`)));
      });
      const host = spawnHost({ type: 'http', url: `http://127.0.0.1:${port}/mcp` });
      host.send(initialize('init', '2025-06-18'));
      await host.next((l) => !Array.isArray(l) && l.id === 'init');
      host.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      host.send({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'fx__big', arguments: {} } });
      const answer = (await host.next((l) => !Array.isArray(l) && l.id === 'call')) as { result: { content: { text: string }[] } };
      expect(answer.result.content[0].text).toBe('z'.repeat(6000));
      expect(host.stray).toEqual([]);
    } finally {
      upstream.kill('SIGTERM');
    }
  });
});

describe('switchboard stdio: a line past the limit', () => {
  it('is refused with -32600 and dropped up to its newline; the next message is answered', async () => {
    const host = await launch('2025-06-18');
    const from = host.lines.length;
    // 17 MiB without a newline, then its end: one line over the 16 MiB limit.
    const chunk = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 17; i++) host.proc.stdin.write(chunk);
    host.proc.stdin.write('\n');
    host.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    expect(await host.next(() => true, from)).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining('Request too large') } });
    expect(await host.next((l) => !Array.isArray(l) && l.id === 'after', from)).toEqual({ jsonrpc: '2.0', id: 'after', result: {} });
  });
});

describe('switchboard stdio: a line that is not JSON', () => {
  it('is answered -32700 naming a line (stdio has no body), and the next message is answered', async () => {
    const host = await launch('2025-06-18');
    const from = host.lines.length;
    host.proc.stdin.write('not json\n');
    host.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    expect(await host.next(() => true, from)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the line is not valid JSON' } });
    expect(await host.next((l) => !Array.isArray(l) && l.id === 'after', from)).toEqual({ jsonrpc: '2.0', id: 'after', result: {} });
  });
});
