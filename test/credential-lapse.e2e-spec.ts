import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { createKey, runCli } from './support/cli.js';
import { openStream } from './support/sse-client.js';
import { INITIALIZE, MCP_ACCEPT } from './support/mcp-http.js';

/**
 * A credential that stops holding while its holder has things open: a revoked API key's
 * session, with a call in flight, a GET stream and a legacy SSE stream. Everything it held
 * must end (the streams, the POST answer, the session id, the call at the upstream), and the
 * audit log must say why. Sessions of keys that still hold are left alone, across reloads.
 */

afterAll(stopAllDaemons);

describe('a revoked API key ends what its holder has open', () => {
  let daemon: DaemonHandle;
  let configPath: string;
  let dataDir: string;
  let watcher: Client;

  const devKey = (name: string): string => createKey(configPath, name, 'dev');
  const revoke = (name: string) => expect(runCli(['keys', 'revoke', '--config', configPath, name]).code).toBe(0);
  /** The shared fixture upstream's counters: every host's calls reach the one connection. */
  const upstreamStats = async () => {
    const result = await watcher.callTool({ name: 'fx__stats', arguments: {} });
    return JSON.parse(String((result.content as { text: string }[])[0]!.text)) as { cancelled: number; cancelNotices: number };
  };
  const connect = async (key: string): Promise<Client> => {
    const client = new Client({ name: 'e2e-lapse', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { 'X-API-Key': key } } }));
    return client;
  };
  /** A slow call, resolved once the upstream demonstrably runs it (its first progress). */
  const slowCall = (client: Client) => {
    let running!: () => void;
    const started = new Promise<void>((resolve) => (running = resolve));
    const outcome = client
      .callTool({ name: 'fx__slow', arguments: { ms: 120_000, steps: 1200 } }, { onprogress: () => running(), timeout: 120_000 })
      .then(
        () => 'answered',
        (error: unknown) => String(error),
      );
    return { started, outcome };
  };
  const lapseRows = (sessionId: string) => auditRows(dataDir, `method = 'session' AND session_id = ?`, sessionId);
  /** The warning that the session was ended; it may reach this process after the audit row does. */
  const warnedEnd = (sessionId: string) =>
    daemon.waitForLog((line) => line.includes('"level":40') && line.includes('ended a session') && line.includes(sessionId), 15_000, `the warning that ${sessionId} ended`);

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    configPath = writeConfig({ log: { level: 'info' }, auth: { mode: 'required' }, policy: { defaultEffect: 'allow' }, mcpServers: { fx: stdioFixture() } }, dir);
    const watcherKey = devKey('watcher');
    daemon = await startDaemon(configPath);
    watcher = await connect(watcherKey);
  });
  afterAll(() => watcher?.close());

  it('Streamable HTTP: the streaming POST answer ends, the call is cancelled upstream, the session id is unknown, the audit log says why', async () => {
    const key = devKey('gina');
    const client = await connect(key);
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const before = await upstreamStats();
    const call = slowCall(client);
    await call.started;

    revoke('gina');
    expect(await call.outcome).toMatch(/Session ended/);
    await eventually(async () => (await upstreamStats()).cancelNotices > before.cancelNotices || undefined, 15_000, 'the upstream to be told of the cancel');
    // The same name again, a new key: the old session is no longer there for it.
    const successor = devKey('gina');
    await request(daemon.baseUrl)
      .post('/mcp')
      .set('Accept', MCP_ACCEPT)
      .set('X-API-Key', successor)
      .set('Mcp-Session-Id', sessionId)
      .send({ jsonrpc: '2.0', id: 9, method: 'tools/list' })
      .expect(404);
    const [row] = await eventually(() => (lapseRows(sessionId).length > 0 ? lapseRows(sessionId) : undefined), 15_000, 'the audit row');
    expect(row).toMatchObject({ principal: 'gina', auth_method: 'api-key', decision: 'unauthenticated', rule: 'auth:revoked-key', transport: 'streamable-http' });
    expect(String(row!.error_message)).toMatch(/API key 'gina' was revoked/);
    await warnedEnd(sessionId);
    await client.close();
  });

  it('HTTP+SSE: the stream ends with the call cancelled upstream, later POSTs to the session are 404, the audit log says why', async () => {
    const key = devKey('hank');
    const stream = await openStream(daemon.sseUrl, { Accept: 'text/event-stream', 'X-API-Key': key });
    expect(stream.status).toBe(200);
    const sessionId = (await stream.waitFor(/sessionId=([0-9a-f]{32})/))[1]!;
    const post = (message: Record<string, unknown>, as = key) =>
      request(daemon.baseUrl).post(`/messages?sessionId=${sessionId}`).set('X-API-Key', as).send(message);
    await post(INITIALIZE).expect(202);
    await stream.waitFor(/"serverInfo"/);
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }).expect(202);
    const before = await upstreamStats();
    await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 120_000, steps: 1200 }, _meta: { progressToken: 'p' } } }).expect(202);
    await stream.waitFor(/notifications\/progress/);

    revoke('hank');
    await eventually(() => stream.ended() || undefined, 15_000, 'the SSE stream to end');
    await eventually(async () => (await upstreamStats()).cancelNotices > before.cancelNotices || undefined, 15_000, 'the upstream to be told of the cancel');
    await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, devKey('hank')).expect(404);
    const [row] = await eventually(() => (lapseRows(sessionId).length > 0 ? lapseRows(sessionId) : undefined), 15_000, 'the audit row');
    expect(row).toMatchObject({ principal: 'hank', decision: 'unauthenticated', rule: 'auth:revoked-key', transport: 'sse' });
    await warnedEnd(sessionId);
  });

  it("the inbox's event stream ends within a heartbeat, with a warning and a session ended row saying why", async () => {
    const key = devKey('kim');
    const stream = await openStream(`${daemon.baseUrl}/admin/inbox/events`, { Accept: 'text/event-stream', 'X-API-Key': key });
    expect(stream.status).toBe(200);
    await stream.waitFor(/event: snapshot/);

    revoke('kim');
    // The stream rechecks its credential at each heartbeat (15 s).
    await eventually(() => stream.ended() || undefined, 60_000, 'the inbox event stream to end');
    const inboxRows = () => auditRows(dataDir, `method = 'session' AND transport = 'inbox' AND principal = 'kim'`);
    const [row] = await eventually(() => (inboxRows().length > 0 ? inboxRows() : undefined), 15_000, 'the audit row');
    expect(row).toMatchObject({ name: 'ended', auth_method: 'api-key', decision: 'unauthenticated', rule: 'auth:revoked-key', session_id: null });
    expect(String(row!.error_message)).toMatch(/^the inbox event stream was ended: .*API key 'kim' was revoked/);
    expect(inboxRows()).toHaveLength(1);
    // Logged before the row was written, but read through another pipe: it may come after.
    await daemon.waitForLog((line) => line.includes('"level":40') && line.includes('ended an inbox event stream') && line.includes('kim'), 15_000, 'the warning');
  }, 90_000);

  it("signing out of the inbox ends its event stream quietly: no warning, no session ended row", async () => {
    const key = devKey('lena');
    const login = await request(daemon.baseUrl).post('/admin/inbox/login').send({ token: key }).expect(200);
    const cookie = String(login.headers['set-cookie']![0]!).split(';')[0]!;
    const stream = await openStream(`${daemon.baseUrl}/admin/inbox/events`, { Accept: 'text/event-stream', Cookie: cookie });
    expect(stream.status).toBe(200);
    await stream.waitFor(/event: snapshot/);

    await request(daemon.baseUrl).post('/admin/inbox/logout').set('Cookie', cookie).send({}).expect(204);
    // The stream rechecks its session at each heartbeat (15 s).
    await eventually(() => stream.ended() || undefined, 60_000, 'the inbox event stream to end');
    // The page's reconnect: refused, and audited. Rows are written in order, so once this one is
    // there a session ended row for the stream, written before it, would be too.
    await request(daemon.baseUrl).get('/admin/inbox/items').set('Cookie', cookie).expect(401);
    const refusedRows = () => auditRows(dataDir, `method = 'http' AND name = 'GET /admin/inbox/items' AND rule = 'auth:missing'`);
    await eventually(() => (refusedRows().length > 0 ? refusedRows() : undefined), 15_000, 'the refused reconnect row');
    expect(auditRows(dataDir, `method = 'session' AND transport = 'inbox' AND principal = 'lena'`)).toHaveLength(0);
    // The stream logs one of two lines as it ends: once the quiet one has arrived, the warning
    // would have been there instead.
    await daemon.waitForLog((line) => line.includes('"level":30') && line.includes('its inbox session is over') && line.includes('lena'), 15_000, 'the info line');
    const lines = daemon.stderr().split('\n');
    expect(lines.some((line) => line.includes('ended an inbox event stream: its credential no longer holds') && line.includes('lena'))).toBe(false);
  }, 90_000);

  it("a revoked key signed in to the inbox: each of the cookie's event streams ends with a warning and its own session ended row, though another request ended the cookie session first", async () => {
    const key = devKey('mona');
    const login = await request(daemon.baseUrl).post('/admin/inbox/login').send({ token: key }).expect(200);
    const cookie = String(login.headers['set-cookie']![0]!).split(';')[0]!;
    // Two tabs of one browser: two event streams on the same cookie session.
    const streams = [
      await openStream(`${daemon.baseUrl}/admin/inbox/events`, { Accept: 'text/event-stream', Cookie: cookie }),
      await openStream(`${daemon.baseUrl}/admin/inbox/events`, { Accept: 'text/event-stream', Cookie: cookie }),
    ];
    for (const stream of streams) {
      expect(stream.status).toBe(200);
      await stream.waitFor(/event: snapshot/);
    }

    revoke('mona');
    // A page's /items recheck meets the refusal before either stream's heartbeat (every 15 s)
    // does, and ends the cookie session: the streams must still learn that it was a revocation.
    await eventually(async () => (await request(daemon.baseUrl).get('/admin/inbox/items').set('Cookie', cookie)).status === 401 || undefined, 15_000, 'the cookie to be refused');
    for (const stream of streams) await eventually(() => stream.ended() || undefined, 60_000, 'the inbox event streams to end');
    const inboxRows = () => auditRows(dataDir, `method = 'session' AND transport = 'inbox' AND principal = 'mona'`);
    const rows = await eventually(() => (inboxRows().length >= 2 ? inboxRows() : undefined), 15_000, 'a session ended row for each stream');
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatchObject({ name: 'ended', auth_method: 'api-key', decision: 'unauthenticated', rule: 'auth:revoked-key', session_id: null });
      expect(String(row.error_message)).toMatch(/^the inbox event stream was ended: .*API key 'mona' was revoked/);
    }
    const warnings = () => daemon.stderr().split('\n').filter((line) => line.includes('"level":40') && line.includes('ended an inbox event stream') && line.includes('mona'));
    await eventually(() => warnings().length >= 2 || undefined, 15_000, 'a warning for each stream');
    expect(warnings()).toHaveLength(2);
  }, 120_000);

  it('a reload, and another key revoked, leave the sessions of keys that still hold as they were', async () => {
    const key = devKey('ivy');
    const post = (message: Record<string, unknown>, sessionId?: string) => {
      const req = request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', key);
      return (sessionId ? req.set('Mcp-Session-Id', sessionId) : req).send(message);
    };
    const sessionId = (await post(INITIALIZE).expect(200)).headers['mcp-session-id'] as string;
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId).expect(202);
    const getStream = await openStream(daemon.mcpUrl, { Accept: 'text/event-stream', 'X-API-Key': key, 'Mcp-Session-Id': sessionId });
    expect(getStream.status).toBe(200);
    // A reload that changes no credential (a second upstream): the host hears of its tools.
    writeConfig({ log: { level: 'info' }, auth: { mode: 'required' }, policy: { defaultEffect: 'allow' }, mcpServers: { fx: stdioFixture(), fy: stdioFixture() } }, join(dataDir, '..'));
    await getStream.waitFor(/notifications\/tools\/list_changed/, 20_000);
    // A control session whose key is revoked after the reload: once it has ended, the
    // check has run over every session since the reload.
    const control = await connect(devKey('jack'));
    const controlId = (control.transport as StreamableHTTPClientTransport).sessionId!;
    revoke('jack');
    await eventually(() => lapseRows(controlId).length > 0 || undefined, 15_000, 'the control session to end');

    expect(lapseRows(sessionId)).toEqual([]);
    expect(getStream.ended()).toBe(false);
    const listed = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId).expect(200);
    expect(listed.text).toContain('fy__echo');
    getStream.close();
    await control.close().catch(() => undefined);
  });
});
