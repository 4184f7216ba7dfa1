import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Client, ProtocolError, ProtocolErrorCode, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectToFixture, type FixtureConnection } from './fixture-client.js';
import { assertFixturesBuilt, fixturePath, startHttpFixture, type FixtureKind, type HttpFixture } from './fixture-process.js';
import type { FixtureStatsReport } from './fixtures/fixture-control-tools.js';
import { LONG_TOOL_NAME } from './fixtures/fixture-options.js';

beforeAll(() => assertFixturesBuilt());

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.allSettled(cleanup.splice(0).map((stop) => stop()));
});

async function connect(kind: FixtureKind, env: Record<string, string> = {}): Promise<FixtureConnection> {
  const fixture = await connectToFixture(kind, env);
  cleanup.push(() => fixture.close());
  return fixture;
}

async function start(kind: 'http' | 'sse', env: Record<string, string> = {}): Promise<HttpFixture> {
  const fixture = await startHttpFixture(kind, env);
  cleanup.push(() => fixture.stop());
  return fixture;
}

const LIST_METHODS = {
  'tools/list': 'tools',
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
} as const;

describe('fixturePath', () => {
  it('names the built entrypoints under libs/testing/dist/fixtures', () => {
    for (const kind of ['stdio', 'http', 'sse'] as const) {
      expect(fixturePath(kind)).toMatch(new RegExp(`libs/testing/dist/fixtures/${kind}-server\\.js$`));
      expect(existsSync(fixturePath(kind))).toBe(true);
    }
  });
});

describe.each<FixtureKind>(['stdio', 'http', 'sse'])('fixture process over %s', (kind) => {
  it('paginates every list with its own cursors when FIXTURE_PAGE_SIZE is set', async () => {
    const { client } = await connect(kind, {
      FIXTURE_PAGE_SIZE: '2',
      FIXTURE_EXTRA_TOOLS: '5',
      FIXTURE_EXTRA_RESOURCES: '3',
      FIXTURE_EXTRA_PROMPTS: '2',
      FIXTURE_LONG_NAME: '1',
    });
    const walked: Record<string, string[]> = {};
    for (const [method, key] of Object.entries(LIST_METHODS) as [keyof typeof LIST_METHODS, string][]) {
      const names: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = (await client.request({ method, params: cursor ? { cursor } : {} })) as Record<string, unknown>;
        const items = page[key] as { name: string }[];
        expect(items.length).toBeLessThanOrEqual(2);
        names.push(...items.map((item) => item.name));
        cursor = page['nextCursor'] as string | undefined;
        pages++;
      } while (cursor !== undefined);
      expect(pages).toBe(Math.max(1, Math.ceil(names.length / 2)));
      walked[method] = names;
    }
    expect(walked['tools/list']).toHaveLength(24 + 5 + 1);
    expect(walked['tools/list']).toEqual(expect.arrayContaining(['echo', 'extra_000', 'extra_004', LONG_TOOL_NAME]));
    expect(LONG_TOOL_NAME).toHaveLength(70);
    expect(walked['prompts/list']).toEqual(['greet', 'extra_prompt_000', 'extra_prompt_001']);
    expect(walked['resources/list']).toEqual(['hello', 'blob', 'extra_000', 'extra_001', 'extra_002']);
    expect(walked['resources/templates/list']).toEqual(['item']);
    // The SDK's own aggregation follows the same cursors to the same list.
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(walked['tools/list']);

    const foreign = await rejection(client.request({ method: 'prompts/list', params: { cursor: 'bm90LWEtY3Vyc29y' } }));
    expect((foreign as ProtocolError).code).toBe(ProtocolErrorCode.InvalidParams);
  });

  it('ends the process when crash is called, without answering', async () => {
    const fixture = await connect(kind);
    const closed = new Promise<void>((resolve) => {
      fixture.client.onclose = resolve;
    });
    const call = fixture.client.callTool({ name: 'crash', arguments: {} }, { timeout: 5_000 });
    expect(await rejection(call)).toBeDefined();
    if (fixture.http) {
      expect(await fixture.http.exited).toEqual({ code: 1, signal: null });
    } else {
      await closed;
      await vi.waitFor(() => expect(() => process.kill(fixture.pid, 0)).toThrow(), { timeout: 5_000 });
    }
    expect(fixture.stderr()).toContain('crash requested');
  });
});

describe('stdio fixture process', () => {
  function spawnStdio(): { child: ChildProcessWithoutNullStreams; next: () => Promise<Record<string, unknown>> } {
    const child = spawn(process.execPath, [fixturePath('stdio')], { stdio: 'pipe' });
    cleanup.push(async () => child.kill('SIGKILL'));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    // Every stdout line must be a JSON-RPC message: JSON.parse throws otherwise.
    const next = async () => JSON.parse(((await lines.next()).value as string | undefined) ?? 'null') as Record<string, unknown>;
    const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/call', params: { name: 'slow', arguments: { ms: 30, steps: 3 }, _meta: { progressToken: 'p' } } });
    return { child, next };
  }

  it('writes only protocol lines: every progress before the result', async () => {
    const { child, next } = spawnStdio();
    expect(await next()).toMatchObject({ id: 1, result: { serverInfo: { name: 'fixture' } } });
    const methods = [];
    for (let i = 0; i < 4; i++) {
      const message = await next();
      methods.push(message['method'] ?? `result ${String(message['id'])}`);
    }
    expect(methods).toEqual(['notifications/progress', 'notifications/progress', 'notifications/progress', 'result 2']);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'crash', arguments: {} } })}\n`);
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(await next()).toBeNull();
  });

  it("hands ask_client the progress that came in the same chunk as the answer after it (the SDK alone drops it: typescript-sdk#2580)", async () => {
    const child = spawn(process.execPath, [fixturePath('stdio')], { stdio: 'pipe' });
    cleanup.push(async () => child.kill('SIGKILL'));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async () => JSON.parse(((await lines.next()).value as string | undefined) ?? 'null') as Record<string, unknown>;
    const line = (message: object) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
    child.stdin.write(line({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { roots: {} }, clientInfo: { name: 'raw', version: '1' } } }));
    child.stdin.write(line({ method: 'notifications/initialized' }));
    expect(await next()).toMatchObject({ id: 1 });
    child.stdin.write(line({ id: 2, method: 'tools/call', params: { name: 'ask_client', arguments: { method: 'roots/list', progress: true } } }));
    const ask = (await next()) as { id: number; method: string; params: { _meta: { progressToken: number } } };
    expect(ask.method).toBe('roots/list');
    // One write, so one chunk: as a gateway's writes may reach the upstream.
    child.stdin.write(
      line({ method: 'notifications/progress', params: { progressToken: ask.params._meta.progressToken, progress: 1, total: 2 } }) +
        line({ id: ask.id, result: { roots: [] } }),
    );
    const result = (await next()) as { id: number; result: { content: { text: string }[] } };
    expect(result.id).toBe(2);
    expect(JSON.parse(result.result.content[0].text)).toEqual({ answer: { roots: [] }, progress: [{ progress: 1, total: 2 }] });
  });

  it('exits with code 0 once stdin closes', async () => {
    const { child, next } = spawnStdio();
    await next();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});

describe('http fixture processes', () => {
  it('keeps one session per client and counts them in stats', async () => {
    const fixture = await start('http');
    const clients = [new Client({ name: 'a', version: '1' }), new Client({ name: 'b', version: '1' })];
    for (const client of clients) {
      await client.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
      cleanup.push(() => client.close());
    }
    await clients[0]!.callTool({ name: 'add_tool', arguments: { name: 'only_in_a' } });
    const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
    expect(await names(clients[0]!)).toContain('only_in_a');
    expect(await names(clients[1]!)).not.toContain('only_in_a');
    const result = await clients[1]!.callTool({ name: 'stats', arguments: {} });
    const report = JSON.parse((result.content[0] as { text: string }).text) as FixtureStatsReport;
    expect(report).toMatchObject({ sessions: 2, pid: fixture.pid });
  });

  it('leaves /sse to the sse fixture, which refuses Streamable HTTP POSTs', async () => {
    const http = await start('http');
    const sse = await start('sse');
    const origin = (fixture: HttpFixture) => `http://127.0.0.1:${fixture.port}`;
    expect((await fetch(`${origin(http)}/sse`)).status).toBe(404);
    expect((await fetch(`${origin(http)}/sse`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect((await fetch(`${origin(sse)}/sse`, { method: 'POST', body: '{}' })).status).toBe(405);
    expect((await fetch(`${origin(sse)}/mcp`, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('answers with JSON bodies when FIXTURE_JSON_RESPONSE=1', async () => {
    for (const [env, contentType] of [
      [{}, 'text/event-stream'],
      [{ FIXTURE_JSON_RESPONSE: '1' }, 'application/json'],
    ] as const) {
      const fixture = await start('http', env);
      const response = await fetch(fixture.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      });
      expect(response.headers.get('content-type')).toContain(contentType);
      expect(response.headers.get('mcp-session-id')).toBeTruthy();
      await response.body?.cancel();
    }
  });

  it('rejects with the fixture stderr when it cannot start', async () => {
    const failure = await rejection(startHttpFixture('http', { FIXTURE_PAGE_SIZE: 'lots' }));
    expect(String(failure)).toContain('exited before listening');
    expect(String(failure)).toContain('FIXTURE_PAGE_SIZE must be a non-negative integer');
  });
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}
