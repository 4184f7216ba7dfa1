import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, eventually, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { auditRows } from './support/audit-rows.js';
import { connectHost, type Host } from './support/hosts.js';
import { rawHost } from './support/raw-host.js';

/**
 * An upstream that answers tools/call, prompts/get and resources/read with whatever it is
 * told to (test/fixtures/hostile-upstream.mjs, HOSTILE_ANSWERS), through the real daemon: a
 * result the spec does not allow reaches the host as the gateway's -32000 naming the
 * upstream and what is wrong, and its audit row says error, not ok; a well-formed one passes
 * unchanged, whatever fields and content types it has that the gateway does not know.
 */

type Json = Record<string, unknown>;

const COUNTED = {
  name: 'counted',
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
};
const PLAIN = { name: 'plain', inputSchema: { type: 'object' } };
/** ^\d*\d*\d*\d*\d*x$ takes JavaScript's engine O(n^5) steps to refuse n digits: 120 held the daemon 0.8 s, 200 some 10 s. */
const PATTERNED = {
  name: 'patterned',
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object', properties: { slow: { type: 'string', pattern: '^\\d*\\d*\\d*\\d*\\d*x$' }, digits: { type: 'string', pattern: '^\\d+$' } } },
};

let dir: string;
let daemon: DaemonHandle;
let host: Host;
let raw: Awaited<ReturnType<typeof rawHost>>;
let nextId = 1;

/** What the raw host gets for one request: the whole JSON-RPC answer. */
async function ask(method: string, params: Json): Promise<Json> {
  const id = nextId++;
  const reply = raw.post({ jsonrpc: '2.0', id, method, params });
  return raw.waitFor([reply], (m) => m.id === id, 30_000);
}

const callWith = (tool: string, answer: unknown) => ask('tools/call', { name: `odd__${tool}`, arguments: { answer } });

/** The audit row of the raw host's request `id`. */
const rowOf = (id: unknown) => auditRows(join(dir, 'data'), 'request_id = ? AND client_name = ?', String(id), 'raw-host')[0];

beforeAll(async () => {
  dir = tempDir('sb-results-');
  daemon = await startDaemon(
    writeConfig(
      {
        mcpServers: {
          odd: {
            command: process.execPath,
            args: [join(REPO_ROOT, 'test/fixtures/hostile-upstream.mjs')],
            env: { HOSTILE_ANSWERS: '1', HOSTILE_TOOLS: JSON.stringify([COUNTED, PLAIN, PATTERNED]) },
          },
        },
      },
      dir,
    ),
  );
  host = await connectHost('streamable-http', { daemon });
  await eventually(async () => (await host.client.listTools()).tools.some((t) => t.name === 'odd__counted'), 60_000, 'odd listed');
  raw = await rawHost(daemon, {});
}, 90_000);

afterAll(async () => {
  await raw?.close();
  await host?.close();
  await stopAllDaemons();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a malformed tools/call result', () => {
  it.each([
    ['plain', { isError: false }, 'content is missing'],
    ['plain', { content: 'done' }, 'content is not an array'],
    ['plain', { content: ['done'] }, 'content[0] is not an object'],
    ['plain', { content: [{ text: 'done' }] }, 'content[0] has no string type'],
    ['plain', { content: [], isError: 'no' }, 'isError is not a boolean'],
    ['plain', { content: [], structuredContent: [1] }, 'structuredContent is not an object'],
    ['counted', { content: [{ type: 'text', text: '3' }] }, 'structuredContent is missing, and the tool declares an outputSchema'],
    ['counted', { content: [], structuredContent: { count: 'three' } }, "structuredContent does not match the tool's outputSchema: data/count must be integer"],
  ])('from tool %s, %j, is an error naming the upstream, the tool and the problem, and its row says so', async (tool, answer, problem) => {
    const reply = await callWith(tool, answer);
    const message = `Upstream 'odd' sent an invalid tools/call result for tool 'odd__${tool}': ${problem}`;
    expect(reply).toEqual({ jsonrpc: '2.0', id: reply.id, error: { code: -32000, message } });
    expect(rowOf(reply.id)).toMatchObject({ method: 'tools/call', upstream: 'odd', decision: 'allowed', outcome: 'error', error_code: -32000, error_message: message });
  });

  it('reaches an SDK host as the gateway error, not as its own failure to parse', async () => {
    const error = await host.client.callTool({ name: 'odd__counted', arguments: { answer: { content: [] } } }).then(
      () => undefined,
      (err: { code?: number; message: string }) => err,
    );
    expect(error?.code).toBe(-32000);
    expect(error?.message).toContain("Upstream 'odd' sent an invalid tools/call result for tool 'odd__counted': structuredContent is missing");
  });
});

describe("a tools/call result checked against its tool's outputSchema patterns", () => {
  it('is judged without backtracking: 5,000 digits against ^\\d*\\d*\\d*\\d*\\d*x$ get the mismatch error, and the daemon serves others', async () => {
    const reply = await callWith('patterned', { content: [], structuredContent: { slow: '1'.repeat(5_000) } });
    const message = `Upstream 'odd' sent an invalid tools/call result for tool 'odd__patterned': structuredContent does not match the tool's outputSchema: data/slow must match pattern "^\\d*\\d*\\d*\\d*\\d*x$"`;
    expect(reply.error).toEqual({ code: -32000, message });
    expect(rowOf(reply.id)).toMatchObject({ outcome: 'error', error_message: message });
    expect((await host.client.listTools()).tools.map((t) => t.name)).toContain('odd__patterned');
  });

  it('whose patterns would take more steps than a result may spend passes unchecked, and the log says so', async () => {
    // 300,000 digits and an x: some 1.2 million steps of ^\d+$, over the 1 million a result may spend.
    const answer = { content: [], structuredContent: { digits: `${'1'.repeat(300_000)}x` } };
    const reply = await callWith('patterned', answer);
    expect(reply.result).toEqual(answer);
    expect(rowOf(reply.id)).toMatchObject({ outcome: 'ok' });
    await eventually(() => daemon.stderr().includes("a result's structuredContent passed unchecked"), 15_000, 'the warning');
  });
});

describe('a well-formed tools/call result', () => {
  const blocks = [
    { type: 'text', text: 'hi', annotations: { audience: ['user'], priority: 1 } },
    { type: 'image', data: 'aGk=', mimeType: 'image/png' },
    { type: 'audio', data: 'aGk=', mimeType: 'audio/wav' },
    { type: 'resource_link', uri: 'file:///tmp/a.txt', name: 'a.txt', mimeType: 'text/plain' },
    { type: 'resource', resource: { uri: 'file:///tmp/b.txt', text: 'b' } },
    { type: 'resource', resource: { uri: 'file:///tmp/c.bin', blob: 'Yw==' } },
  ];

  it('passes unchanged, with fields and content types the gateway does not know', async () => {
    const answer = { content: [...blocks, { type: 'hologram', frames: 3 }], _meta: { 'example.com/trace': 'x' }, vendorField: { a: 1 } };
    const reply = await callWith('plain', answer);
    expect(reply.result).toEqual(answer);
    expect(rowOf(reply.id)).toMatchObject({ outcome: 'ok', error_code: null });
  });

  it('of a tool with an outputSchema, and one that is an error, reach an SDK host as they were sent', async () => {
    const structured = { content: blocks, structuredContent: { count: 3, extra: true } };
    expect(await host.client.callTool({ name: 'odd__counted', arguments: { answer: structured } })).toEqual(structured);
    // An error result need not match the schema (the SDK's client does not check it either).
    const failed = { content: [{ type: 'text', text: 'it broke' }], isError: true };
    expect(await host.client.callTool({ name: 'odd__counted', arguments: { answer: failed } })).toEqual(failed);
  });
});

describe('a tool with an outputSchema, to a host of a revision before structured content', () => {
  it('may answer without structuredContent: that host sees neither the schema nor structuredContent', async () => {
    const older = await rawHost(daemon, {}, '2025-03-26');
    try {
      const reply = older.post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'odd__counted', arguments: { answer: { content: [{ type: 'text', text: '3' }] } } } });
      const answer = await older.waitFor([reply], (m) => m.id === 1, 30_000);
      expect(answer.result).toEqual({ content: [{ type: 'text', text: '3' }] });
    } finally {
      await older.close();
    }
  });
});

describe('a resource_link in a result, to a 2025-06-18 host', () => {
  it('comes as that revision has a resource: without the icons 2025-11-25 added', async () => {
    const link = { type: 'resource_link', uri: 'file:///tmp/a.txt', name: 'a.txt', title: 'A', annotations: { lastModified: '2025-01-01T00:00:00Z' }, _meta: { k: 1 } };
    const older = await rawHost(daemon, {}, '2025-06-18');
    try {
      const reply = older.post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'odd__plain', arguments: { answer: { content: [{ ...link, icons: [{ src: 'https://example.com/a.png' }] }] } } } });
      const answer = await older.waitFor([reply], (m) => m.id === 1, 30_000);
      expect(answer.result).toEqual({ content: [link] });
    } finally {
      await older.close();
    }
  });
});

describe('prompts/get and resources/read results', () => {
  it('are errors when malformed: messages or contents that are no list, a message without a role', async () => {
    const prompt = await ask('prompts/get', { name: 'odd__answer', arguments: { answer: JSON.stringify({ messages: [{ content: { type: 'text', text: 'x' } }] }) } });
    expect(prompt.error).toEqual({ code: -32000, message: "Upstream 'odd' sent an invalid prompts/get result for prompt 'odd__answer': messages[0].role is neither user nor assistant" });
    expect(rowOf(prompt.id)).toMatchObject({ method: 'prompts/get', outcome: 'error', error_code: -32000 });
    const uri = `answer:${encodeURIComponent(JSON.stringify({ contents: 'x' }))}`;
    const read = await ask('resources/read', { uri });
    expect(read.error).toEqual({ code: -32000, message: `Upstream 'odd' sent an invalid resources/read result for resource '${uri}': contents is not an array` });
    expect(rowOf(read.id)).toMatchObject({ method: 'resources/read', outcome: 'error', error_code: -32000 });
  });

  it('pass unchanged when well-formed', async () => {
    const messages = { description: 'd', messages: [{ role: 'user', content: { type: 'text', text: 'x' } }], extra: 1 };
    const prompt = await ask('prompts/get', { name: 'odd__answer', arguments: { answer: JSON.stringify(messages) } });
    expect(prompt.result).toEqual(messages);
    const contents = { contents: [{ uri: 'answer:x', text: 'x', mimeType: 'text/plain' }, { uri: 'answer:y', blob: 'eQ==' }] };
    const read = await ask('resources/read', { uri: `answer:${encodeURIComponent(JSON.stringify(contents))}` });
    expect(read.result).toEqual(contents);
  });
});

describe('completion/complete results', () => {
  /** The upstream answers the completed argument's value, parsed as JSON (HOSTILE_ANSWERS). */
  const completeWith = (answer: unknown) => ({ ref: { type: 'ref/prompt', name: 'odd__answer' }, argument: { name: 'answer', value: JSON.stringify(answer) } });
  const values = (count: number) => Array.from({ length: count }, (_, i) => `v${i}`);

  it('of more than the 100 values the spec allows reach an SDK host as the first 100, with hasMore and the total kept', async () => {
    const { completion } = await host.client.complete(completeWith({ completion: { values: values(150), total: 150, hasMore: false } }) as never);
    expect(completion).toEqual({ values: values(100), total: 150, hasMore: true });
    // Without a total, the number the upstream had is the total.
    const untold = await ask('completion/complete', completeWith({ completion: { values: values(101) } }));
    expect(untold.result).toEqual({ completion: { values: values(100), total: 101, hasMore: true } });
  });

  it('of 100 values or fewer pass unchanged, total and hasMore as sent', async () => {
    const answer = { completion: { values: values(100), total: 250, hasMore: true }, _meta: { 'example.com/x': 1 } };
    expect((await ask('completion/complete', completeWith(answer))).result).toEqual(answer);
  });

  it('are errors when malformed: no completion, values that are not strings', async () => {
    const missing = await ask('completion/complete', completeWith({ values: ['a'] }));
    const subject = "Upstream 'odd' sent an invalid completion/complete result for prompt 'odd__answer'";
    expect(missing.error).toEqual({ code: -32000, message: `${subject}: completion is missing` });
    const numbers = await ask('completion/complete', completeWith({ completion: { values: ['a', 2] } }));
    expect(numbers.error).toEqual({ code: -32000, message: `${subject}: completion.values[1] is not a string` });
    expect(rowOf(numbers.id)).toMatchObject({ method: 'completion/complete', upstream: 'odd', outcome: 'error', error_code: -32000 });
  });
});
