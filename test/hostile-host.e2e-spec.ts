import { dirname, join } from 'node:path';
import { MAX_URI_CHARS } from '@switchboard/core';
import { LIST_CHANGED_BURST, MAX_SUBSCRIPTIONS_PER_SESSION } from '@switchboard/relay';
import { ITEM_TEMPLATE } from '@switchboard/testing';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { REPO_ROOT, eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { openStream } from './support/sse-client.js';
import { rawHost } from './support/raw-host.js';

/**
 * The downstream edge as a careless or hostile host meets it: refusals that must still say
 * which request they refuse, and the MCP-Protocol-Version header on a session. Driven with
 * supertest against the real daemon and a real stdio fixture upstream.
 */
let daemon: DaemonHandle;
const ACCEPT = 'application/json, text/event-stream';
const init = (id: number | string, protocolVersion = '2025-06-18') => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'hostile', version: '1' } },
});

/** POSTs `body` to /mcp: a message, or a text sent as it is (JSON that JSON.stringify cannot write). */
function post(body: unknown, headers: Record<string, string> = {}) {
  let r = request(daemon.baseUrl).post('/mcp').set('Accept', ACCEPT).set('Content-Type', 'application/json');
  for (const [k, v] of Object.entries(headers)) r = r.set(k, v);
  return r.send(typeof body === 'string' ? body : JSON.stringify(body));
}

async function openSession(protocolVersion = '2025-06-18'): Promise<string> {
  const res = await post(init(1, protocolVersion)).expect(200);
  const sid = res.headers['mcp-session-id'] as string;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'Mcp-Session-Id': sid }).expect(202);
  return sid;
}

beforeAll(async () => {
  daemon = await startDaemon({ mcpServers: { fx: stdioFixture() } });
});
afterAll(stopAllDaemons);

describe('Streamable HTTP: a refused POST names the request it refuses', () => {
  it('a second initialize, a missing or unknown session and an unsupported MCP-Protocol-Version answer with the request id', async () => {
    const sid = await openSession();
    const again = await post(init('second-init'), { 'Mcp-Session-Id': sid }).expect(400);
    expect(again.body).toMatchObject({ id: 'second-init', error: { code: -32600 } });

    const missing = await post({ jsonrpc: '2.0', id: 41, method: 'tools/list' }).expect(400);
    expect(missing.body).toMatchObject({ id: 41, error: { code: -32600, message: expect.stringMatching(/Mcp-Session-Id/) } });

    const unknown = await post({ jsonrpc: '2.0', id: 'gone', method: 'ping' }, { 'Mcp-Session-Id': 'f'.repeat(32) }).expect(404);
    expect(unknown.body).toMatchObject({ id: 'gone', error: { code: -32000 } });

    const version = await post({ jsonrpc: '2.0', id: 43, method: 'ping' }, { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2099-01-01' }).expect(400);
    expect(version.body).toMatchObject({ id: 43, error: { code: -32600, message: expect.stringMatching(/MCP-Protocol-Version/) } });

    // Not a request: nothing to name.
    const notification = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }).expect(400);
    expect(notification.body.id).toBeNull();
    // The session survived every refusal.
    const ping = await post({ jsonrpc: '2.0', id: 44, method: 'ping' }, { 'Mcp-Session-Id': sid }).expect(200);
    expect(ping.body).toEqual({ jsonrpc: '2.0', id: 44, result: {} });
  });
});

/**
 * What the project decided (README, "MCP-Protocol-Version"): a value that is no revision
 * Switchboard speaks is 400, as 2025-06-18 and 2025-11-25 require; a revision it speaks
 * that differs from the negotiated one is accepted, and the negotiated one still decides
 * the shape of every answer. The official conformance suite sends 2025-03-26 on sessions
 * that negotiated 2025-11-25 (server-sse-polling, server-sse-multiple-streams).
 */
describe('Streamable HTTP: MCP-Protocol-Version on a session', () => {
  const add = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'fx__add', arguments: { a: 2, b: 3 } } });

  it('a malformed or unsupported value is 400 on POST, GET and DELETE; the session goes on', async () => {
    const sid = await openSession('2025-11-25');
    for (const version of ['', 'garbage', '2025-06-18, 2025-03-26', '2000-01-01', '2026-07-28']) {
      const res = await post(add(50), { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': version }).expect(400);
      expect(res.body.error).toMatchObject({ code: -32600, message: expect.stringMatching(/MCP-Protocol-Version/) });
    }
    await request(daemon.baseUrl).get('/mcp').set('Accept', 'text/event-stream').set('Mcp-Session-Id', sid).set('MCP-Protocol-Version', 'garbage').expect(400);
    await request(daemon.baseUrl).delete('/mcp').set('Mcp-Session-Id', sid).set('MCP-Protocol-Version', 'garbage').expect(400);
    await post(add(51), { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' }).expect(200);
  });

  it('a supported revision other than the negotiated one is accepted, and the negotiated revision shapes the answer', async () => {
    // 2024-11-05 has no structuredContent: its JSON comes as one more text block (README).
    const old = await openSession('2024-11-05');
    const oldRes = await post(add(60), { 'Mcp-Session-Id': old, 'MCP-Protocol-Version': '2025-11-25' }).expect(200);
    expect(oldRes.body.result.structuredContent).toBeUndefined();
    expect(oldRes.body.result.content).toEqual([{ type: 'text', text: '5' }, { type: 'text', text: JSON.stringify({ sum: 5 }) }]);

    const recent = await openSession('2025-11-25');
    const recentRes = await post(add(61), { 'Mcp-Session-Id': recent, 'MCP-Protocol-Version': '2025-03-26' }).expect(200);
    expect(recentRes.body.result.structuredContent).toEqual({ sum: 5 });
  });
});

describe('ids and progress tokens JSON cannot carry exactly', () => {
  // JSON.parse rounds an integer past 2^53 - 1: answered, it would come back as another id
  // (1.2345678901234568e+29), which a host that compares ids exactly never matches.
  const huge = '123456789012345678901234567890';

  it('an integer id past 2^53 - 1 is -32600 at once, not answered under another id', async () => {
    const sid = await openSession();
    const res = await post(`{"jsonrpc":"2.0","id":${huge},"method":"ping"}`, { 'Mcp-Session-Id': sid }).expect(400);
    expect(res.body).toMatchObject({ id: null, error: { code: -32600 } });
    await post({ jsonrpc: '2.0', id: Number.MAX_SAFE_INTEGER, method: 'ping' }, { 'Mcp-Session-Id': sid }).expect(200);
  });

  it('so is -32602 a progressToken past 2^53 - 1', async () => {
    const sid = await openSession();
    const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fx__echo","arguments":{"text":"x"},"_meta":{"progressToken":${huge}}}}`;
    const res = await post(body, { 'Mcp-Session-Id': sid }).expect(200);
    expect(res.body).toMatchObject({ id: 7, error: { code: -32602, message: expect.stringMatching(/progressToken/) } });
  });
});

describe('HTTP+SSE: sessions per caller (rateLimits.sessionsPerPrincipal)', () => {
  it('a caller at the limit is refused another /sse stream with 429 and an audit row, until it closes one', async () => {
    const dir = tempDir();
    const capped = await startDaemon(writeConfig({ rateLimits: { sessionsPerPrincipal: 2 }, mcpServers: { fx: stdioFixture() } }, dir));
    const open = () => openStream(capped.sseUrl, { Accept: 'text/event-stream' });
    const streams = [await open(), await open()];
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    await Promise.all(streams.map((s) => s.waitFor(/event: endpoint/)));

    const refused = await open();
    try {
      expect(refused.status).toBe(429);
      await refused.waitFor(/"code":-31429,"message":"Too many sessions/);
    } finally {
      refused.close();
    }
    const [row] = await eventually(() => {
      const rows = auditRows(join(dir, 'data'), `rule = 'limit:sessions'`);
      return rows.length > 0 ? rows : undefined;
    });
    expect(row).toMatchObject({ decision: 'limited', error_code: -31429 });

    // The sessions held still work, and a closed one makes room.
    const endpoint = /data: (\S+)/.exec(streams[0].text())![1];
    await request(capped.baseUrl).post(endpoint).set('Content-Type', 'application/json').send(JSON.stringify(init(1))).expect(202);
    await streams[0].waitFor(/"id":1,"result"/);
    streams[1].close();
    const again = await eventually(async () => {
      const s = await open();
      if (s.status === 200) return s;
      s.close();
      return undefined;
    });
    again.close();
    streams[0].close();
  });
});

describe('Streamable HTTP on 2025-03-26: the size of a batch', () => {
  const pings = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));

  it('a batch of more than 1,000 messages is refused whole with 400 and -32600; one of 1,000 is answered whole', async () => {
    const sid = await openSession('2025-03-26');
    const refused = await post(pings(1_001), { 'Mcp-Session-Id': sid }).expect(400);
    expect(refused.body).toMatchObject({ id: null, error: { code: -32600, message: expect.stringMatching(/at most 1000 messages/) } });
    const answered = await post(pings(1_000), { 'Mcp-Session-Id': sid }).expect(200);
    expect(answered.body).toHaveLength(1_000);
  });
});

describe('a body that begins with a byte order mark', () => {
  // RFC 8259 section 8.1: a parser may ignore a BOM; switchboard stdio always did (it trims each line).
  it('is read as the JSON after it on /mcp, not refused with -32700', async () => {
    const body = `\uFEFF${JSON.stringify(init('bom'))}`;
    const res = await post(body).expect(200);
    expect(res.body).toMatchObject({ id: 'bom', result: { protocolVersion: '2025-06-18' } });
  });
});

describe('the length of a resource URI a host sends', () => {
  /** A URI of `length` characters that the fixture's template fixture://items/{id} routes. */
  const itemUri = (length: number) => {
    const prefix = ITEM_TEMPLATE.replace('{id}', '');
    return prefix + 'a'.repeat(length - prefix.length);
  };
  const over = itemUri(MAX_URI_CHARS + 1);
  const tooLong = (field: string) => ({ code: -32602, message: `Invalid params: '${field}' is ${MAX_URI_CHARS + 1} characters; the limit is ${MAX_URI_CHARS}` });

  it('one at the limit is read; one longer is -32602 in read, subscribe, unsubscribe and completion, before any routing or policy, and audited as refused', async () => {
    const sid = await openSession();
    const send = (id: number, method: string, params: Record<string, unknown>) => post({ jsonrpc: '2.0', id, method, params }, { 'Mcp-Session-Id': sid }).expect(200);

    const atLimit = await send(70, 'resources/read', { uri: itemUri(MAX_URI_CHARS) });
    expect(atLimit.body.result.contents[0].uri).toBe(itemUri(MAX_URI_CHARS));

    expect((await send(71, 'resources/read', { uri: over })).body.error).toEqual(tooLong('uri'));
    expect((await send(72, 'resources/subscribe', { uri: over })).body.error).toEqual(tooLong('uri'));
    expect((await send(73, 'resources/unsubscribe', { uri: over })).body.error).toEqual(tooLong('uri'));
    const completion = await send(74, 'completion/complete', { ref: { type: 'ref/resource', uri: over }, argument: { name: 'id', value: 'a' } });
    expect(completion.body.error).toEqual(tooLong('ref.uri'));

    // Refused before the catalog was asked: not catalog:unknown-resource, and no upstream.
    const rows = auditRows(join(dirname(daemon.configPath), 'data'), "rule = 'request:uri-too-long'");
    expect(rows.map((r) => [r.method, r.decision, r.error_code, r.upstream])).toEqual([
      ['resources/read', 'refused', -32602, null],
      ['resources/subscribe', 'refused', -32602, null],
      ['completion/complete', 'refused', -32602, null],
    ]);
    // The row keeps the start of the URI, as of any name a host chose.
    expect(String(rows[0].name).length).toBeLessThan(over.length);
  });
});

describe("a host's notifications/roots/list_changed in a loop", () => {
  it('reaches the upstreams as a burst and then at a steady rate, the last change always: 5,000 do not make 5,000 upstream', async () => {
    const sid = await openSession('2025-03-26');
    // On a loopback gateway without authentication the shared fixture gets the host's roots changes.
    const passedOn = async () => {
      const res = await post({ jsonrpc: '2.0', id: 90, method: 'tools/call', params: { name: 'fx__stats', arguments: {} } }, { 'Mcp-Session-Id': sid }).expect(200);
      return (JSON.parse(res.body.result.content[0].text) as { rootsChanged: number }).rootsChanged;
    };
    const before = await passedOn();
    const batch = Array.from({ length: 1_000 }, () => ({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' }));
    for (let i = 0; i < 5; i++) await post(batch, { 'Mcp-Session-Id': sid }).expect(202);
    // The call goes down the same stdio pipe as every notification passed on before it. A
    // burst, then one a second: 100 would take the five POSTs a minute and a half.
    expect((await passedOn()) - before).toBeLessThan(100);
    // What the burst left waiting is passed on as one, however fast the host stopped.
    await eventually(async () => (await passedOn()) - before > LIST_CHANGED_BURST, 15_000, 'the last change passed on');
  });
});

describe('a host subscribing to URI after URI', () => {
  it('holds at most MAX_SUBSCRIPTIONS_PER_SESSION in one session: one more is -31429 and never reaches the upstream', async () => {
    // 2025-03-26 takes batches: the subscribes come in two POSTs.
    const sid = await openSession('2025-03-26');
    const item = (i: number) => ITEM_TEMPLATE.replace('{id}', `soak-${i}`);
    const subscribes = Array.from({ length: MAX_SUBSCRIPTIONS_PER_SESSION }, (_, i) => ({ jsonrpc: '2.0', id: `s${i}`, method: 'resources/subscribe', params: { uri: item(i) } }));
    // Batches hold at most 1,000 messages.
    const answers: { error?: unknown }[] = [];
    for (let at = 0; at < subscribes.length; at += 512) answers.push(...((await post(subscribes.slice(at, at + 512), { 'Mcp-Session-Id': sid }).expect(200)).body as { error?: unknown }[]));
    expect(answers.filter((a) => a.error !== undefined)).toEqual([]);
    expect(answers).toHaveLength(MAX_SUBSCRIPTIONS_PER_SESSION);

    const past = await post({ jsonrpc: '2.0', id: 'one-more', method: 'resources/subscribe', params: { uri: item(-1) } }, { 'Mcp-Session-Id': sid }).expect(200);
    expect(past.body).toMatchObject({ id: 'one-more', error: { code: -31429, message: expect.stringMatching(/Too many subscriptions/) } });
    // Its row says limited, by the session's cap, as a rate limit's does.
    const limited = auditRows(join(dirname(daemon.configPath), 'data'), `method = 'resources/subscribe' AND request_id = 'one-more'`);
    expect(limited.map((r) => [r.decision, r.rule, r.outcome, r.error_code, r.upstream])).toEqual([['limited', 'limit:subscriptions', null, -31429, 'fx']]);
    // Held again, not a new one.
    await post({ jsonrpc: '2.0', id: 'again', method: 'resources/subscribe', params: { uri: item(0) } }, { 'Mcp-Session-Id': sid }).expect(200).expect((r) => expect(r.body.result).toEqual({}));

    const stats = await post({ jsonrpc: '2.0', id: 'stats', method: 'tools/call', params: { name: 'fx__stats', arguments: {} } }, { 'Mcp-Session-Id': sid }).expect(200);
    const held = (JSON.parse(stats.body.result.content[0].text) as { subscriptions: string[] }).subscriptions;
    expect(held).toHaveLength(MAX_SUBSCRIPTIONS_PER_SESSION);
    expect(held).not.toContain(item(-1));
    await request(daemon.baseUrl).delete('/mcp').set('Mcp-Session-Id', sid).expect(200);
  });
});

describe("a host's error answer to a relayed request whose data nests thousands of levels deep", () => {
  it('reaches the upstream as an invalid answer, without the data; the daemon and its other sessions go on', async () => {
    const host = await rawHost(daemon, { roots: {} }, '2025-06-18');
    const call = host.post({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'fx__list_roots', arguments: {} } });
    const ask = await host.waitFor([call], (m) => m.method === 'roots/list');
    // Too deep for JSON.stringify: encoding it towards the upstream threw, outside any handler.
    const depth = 100_000;
    const answer = `{"jsonrpc":"2.0","id":${JSON.stringify(ask.id)},"error":{"code":-1,"message":"no roots","data":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
    expect(await host.post(answer).status).toBe(202);
    const result = (await host.waitFor([call], (m) => m.id === 'call', 15_000)) as { result?: { content: { text: string }[] } };
    // The fixture reports what its roots/list got.
    expect(result.result?.content[0].text).toBe("failed: The host's answer to roots/list is invalid: its error's data nests deeper than 256 levels");
    const dataDir = join(dirname(daemon.configPath), 'data');
    const row = await eventually(() => auditRows(dataDir, `method = 'roots/list'`).at(-1), 15_000, 'the roots/list row');
    expect(row).toMatchObject({ decision: 'allowed', rule: 'relay:invalid-answer', outcome: 'error', error_code: -32603, upstream: 'fx' });
    const other = await openSession();
    await post({ jsonrpc: '2.0', id: 'alive', method: 'ping' }, { 'Mcp-Session-Id': other }).expect(200);
    await host.close();
  });
});

/**
 * Progress that the gateway sends an upstream right before the answer is kept in order on the
 * wire, but an SDK server may drop it: the SDK's Protocol (@modelcontextprotocol/server 2.x)
 * runs a notification's handler a microtask later than it handles a response, and handling
 * the response forgets the request's progress handler, so a progress read from stdin in the
 * same chunk as the answer that follows it is "a progress notification for an unknown token"
 * (its onerror) and never reaches the request's onprogress (typescript-sdk#2580). Whether the
 * two lines share a chunk is the upstream process's scheduling: on a loaded machine, now and
 * then, though the gateway wrote them apart, in order (the SDK fixture's ask_client, used here
 * before, missed the plain progress in about one run in three). So what the gateway does is
 * read on the wire, by the hand-written upstream, which keeps the progress and the answer in
 * the order it reads them.
 */
describe("a host's progress for a relayed request that nests thousands of levels deep", () => {
  it('is dropped (it cannot be encoded for the upstream), not a 500 or, on stdio, the end of the gateway; the plain progress after it reaches the upstream, before the answer', async () => {
    const wire = await startDaemon({ mcpServers: { hx: { command: process.execPath, args: [join(REPO_ROOT, 'test/fixtures/hostile-upstream.mjs')] } } });
    const host = await rawHost(wire, { roots: {} }, '2025-06-18');
    // The upstream asks while the call is open (raw answers nothing), asking for progress.
    const roots = '{"jsonrpc":"2.0","id":"probe-roots","method":"roots/list","params":{"_meta":{"progressToken":"probe-roots"}}}';
    const call = host.post({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'hx__raw', arguments: { lines: [roots] } } });
    const ask = (await host.waitFor([call], (m) => m.method === 'roots/list')) as { id: number; params: { _meta: { progressToken: number } } };
    const token = ask.params._meta.progressToken;
    const depth = 100_000;
    const deep = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${token},"progress":1,"_meta":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
    expect(await host.post(deep).status).toBe(202);
    expect(await host.post({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 2 } }).status).toBe(202);
    expect(await host.post({ jsonrpc: '2.0', id: ask.id, result: { roots: [] } }).status).toBe(202);
    // What the upstream read, in its order, once the answer is among it: never the deep one.
    let n = 0;
    const replies = await eventually(async () => {
      const id = `stats-${++n}`;
      const stats = host.post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'hx__stats', arguments: {} } });
      const answer = (await host.waitFor([stats], (m) => m.id === id)) as { result: { content: { text: string }[] } };
      const { replies } = JSON.parse(answer.result.content[0].text) as { replies: { id?: string }[] };
      return replies.some((r) => r.id === 'probe-roots') && replies;
    }, 15_000, "the upstream's reading of the answer");
    expect(replies).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'probe-roots', progress: 2 } },
      { jsonrpc: '2.0', id: 'probe-roots', result: { roots: [] } },
    ]);
    const other = await rawHost(wire, {}, '2025-06-18');
    const ping = other.post({ jsonrpc: '2.0', id: 'alive', method: 'ping' });
    expect(await other.waitFor([ping], (m) => m.id === 'alive')).toEqual({ jsonrpc: '2.0', id: 'alive', result: {} });
    await Promise.all([host.close(), other.close()]);
  });
});
