import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import Database from 'better-sqlite3';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, type AuditRowRecord } from './support/audit-rows.js';
import { connectHost, type Host } from './support/hosts.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { runCli } from './support/cli.js';

type Row = AuditRowRecord;
/** The daemon's audit rows, read through a second connection as an auditor with file access would. */
const rows = auditRows;

afterAll(stopAllDaemons);

describe('audit rows written by the daemon (strict mode)', () => {
  let daemon: DaemonHandle;
  let host: Host;
  let dataDir: string;

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    daemon = await startDaemon(writeConfig({ mcpServers: { fx: stdioFixture() }, audit: { maxArgumentBytes: 300 } }, dir));
    host = await connectHost('streamable-http', { daemon });
  });
  afterAll(async () => {
    await host?.close();
    await stopAllDaemons();
  });

  it('a successful tools/call: every field', async () => {
    const before = Date.now();
    const result = await host.client.callTool({ name: 'fx__echo', arguments: { text: 'hello audit' } });
    const [row] = rows(dataDir, `method = 'tools/call' AND name = 'fx__echo'`);
    const after = Date.now();
    expect(row).toMatchObject({
      principal: 'anonymous',
      auth_method: 'loopback',
      transport: 'streamable-http',
      client_name: 'e2e-streamable-http',
      client_version: '1.0.0',
      upstream: 'fx',
      method: 'tools/call',
      name: 'fx__echo',
      original_name: 'echo',
      arguments: '{"text":"hello audit"}',
      arguments_truncated: 0,
      decision: 'allowed',
      rule: 'policy:default-allow',
      outcome: 'ok',
      error_code: null,
      error_message: null,
      response_bytes: Buffer.byteLength(JSON.stringify(result)),
    });
    expect(row.session_id).toMatch(/^[0-9a-f]{32}$/);
    expect(row.protocol_version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(row.arguments_digest).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(row.latency_ms).toBeGreaterThan(0);
    expect(row.request_id).toMatch(/^\d+$/);
    expect(row.trace_id).toMatch(/^[0-9a-f]{32}$/); // a W3C trace id, made by the gateway
    // When the call was made, on the machine's clock (epoch milliseconds).
    expect(Number(row.at)).toBeGreaterThanOrEqual(before);
    expect(Number(row.at)).toBeLessThanOrEqual(after);
    expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the digest is keyed by a private file in the data dir, and `audit digest` recomputes it', () => {
    expect(statSync(join(dataDir, 'audit-digest.key')).mode & 0o777).toBe(0o600);
    // The data dir and the database the daemon created are its owner's only, whatever the umask.
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, 'switchboard.sqlite')).mode & 0o777).toBe(0o600);
    const [row] = rows(dataDir, `name = 'fx__echo'`);
    const cli = runCli(['audit', 'digest', '--arguments', '{ "text": "hello audit" }', '--config', daemon.configPath]);
    expect(cli.code).toBe(0);
    expect(cli.stdout.trim()).toBe(row.arguments_digest);
  });

  it('a tool error, a JSON-RPC error from the upstream, and an unknown tool', async () => {
    await host.client.callTool({ name: 'fx__fail', arguments: {} });
    await expect(host.client.callTool({ name: 'fx__throw_error', arguments: {} })).rejects.toThrow();
    await expect(host.client.callTool({ name: 'fx__nope', arguments: { x: 1 } })).rejects.toThrow(/Unknown tool/);
    const [fail] = rows(dataDir, `name = 'fx__fail'`);
    expect(fail).toMatchObject({ decision: 'allowed', outcome: 'tool_error', error_code: null });
    const [thrown] = rows(dataDir, `name = 'fx__throw_error'`);
    expect(thrown).toMatchObject({ decision: 'allowed', outcome: 'error', error_code: -32603 });
    expect(thrown.error_message).toMatch(/deliberate JSON-RPC error/);
    const [unknown] = rows(dataDir, `name = 'fx__nope'`);
    expect(unknown).toMatchObject({
      decision: 'denied',
      rule: 'catalog:unknown-tool',
      outcome: null,
      upstream: null,
      error_code: -32602,
      arguments: '{"x":1}',
    });
  });

  it('a call the host cancels: outcome cancelled, no error code (it got no answer), its reason redacted', async () => {
    const controller = new AbortController();
    // Cancelled once the upstream is running it: at its first progress report.
    const call = host.client.callTool(
      { name: 'fx__slow', arguments: { ms: 10_000, steps: 50, tag: 'host-cancel' } },
      { signal: controller.signal, onprogress: () => controller.abort('gave up; password=hunter2hunter2') },
    );
    await expect(call).rejects.toThrow();
    const [row] = await eventually(() => {
      const found = rows(dataDir, `name = 'fx__slow' AND arguments LIKE '%host-cancel%'`);
      return found.length > 0 ? found : undefined;
    });
    expect(row).toMatchObject({ decision: 'allowed', upstream: 'fx', outcome: 'cancelled', error_code: null, response_bytes: null });
    expect(row.error_message).toMatch(/^Cancelled by the host: gave up; password=/);
    expect(row.error_message).not.toMatch(/hunter2/);
    // Not an upstream error and not a timeout (-32001, which a host does get).
    expect(rows(dataDir, `outcome = 'error' AND error_code = -32001`)).toEqual([]);
    // `audit stats` counts it as cancelled, not as an error.
    const cli = runCli(['audit', 'stats', '--json', '--tool', 'fx__slow', '--config', daemon.configPath]);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ calls: 1, errors: 0, cancelled: 1, denials: 0 });
  });

  it('a call whose Streamable HTTP session the host DELETEs records the -32000 the host got', async () => {
    const client = new Client({ name: 'e2e-delete', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(daemon.mcpUrl));
    await client.connect(transport);
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const call = client
      .callTool({ name: 'fx__slow', arguments: { ms: 10_000, steps: 50, tag: 'session-deleted' } }, { onprogress: () => started() })
      .catch((err: unknown) => err);
    await running;
    await transport.terminateSession();
    const got = (await call) as { code?: number; message?: string };
    await client.close().catch(() => undefined);
    expect(got.code).toBe(-32000);
    const [row] = await eventually(() => {
      const found = rows(dataDir, `name = 'fx__slow' AND arguments LIKE '%session-deleted%'`);
      return found.length > 0 ? found : undefined;
    });
    expect(row).toMatchObject({
      decision: 'allowed',
      outcome: 'error',
      error_code: -32000,
      error_message: 'Session ended before the request completed',
    });
    expect(got.message).toContain(row.error_message);
  });

  it('a call whose legacy SSE host goes away records outcome cancelled: no answer could reach it', async () => {
    const sse = await connectHost('sse', { daemon });
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    void sse.client
      .callTool({ name: 'fx__slow', arguments: { ms: 10_000, steps: 50, tag: 'sse-gone' } }, { onprogress: () => started() })
      .catch(() => undefined);
    await running;
    await sse.close();
    const [row] = await eventually(() => {
      const found = rows(dataDir, `name = 'fx__slow' AND arguments LIKE '%sse-gone%'`);
      return found.length > 0 ? found : undefined;
    });
    expect(row).toMatchObject({
      transport: 'sse',
      decision: 'allowed',
      outcome: 'cancelled',
      error_code: null,
      error_message: 'No answer: the session ended before the request completed',
    });
    // The new outcome is only a value in the chained record: the chain, older rows and these, verifies.
    const verify = runCli(['audit', 'verify', '--config', daemon.configPath]);
    expect(verify.stdout + verify.stderr).toMatch(/ok|verified/i);
    expect(verify.code).toBe(0);
  });

  it('secrets in arguments are redacted before they are written; the digest still covers them', async () => {
    await host.client.callTool({
      name: 'fx__echo',
      arguments: { text: 'curl -H "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789"', password: 'hunter2hunter2' },
    });
    const [row] = rows(dataDir, `name = 'fx__echo' AND arguments LIKE '%password%'`);
    expect(row.arguments).not.toMatch(/hunter2|abcdefghijklmnopqrstuvwxyz0123456789/);
    expect(row.arguments).toMatch(/REDACTED/);
    expect(row.arguments_digest).toMatch(/^hmac-sha256:/);
  });

  it('long arguments are cut to maxArgumentBytes and marked', async () => {
    await host.client.callTool({ name: 'fx__echo', arguments: { text: 'é'.repeat(2000) } });
    const [row] = rows(dataDir, `name = 'fx__echo' AND arguments_truncated = 1`);
    expect(Buffer.byteLength(String(row.arguments))).toBeLessThanOrEqual(300);
  });

  it('resources/read, prompts/get and completion/complete are recorded', async () => {
    const { resources } = await host.client.listResources();
    const hello = resources.find((r) => r.name === 'hello')!;
    await host.client.readResource({ uri: hello.uri });
    await host.client.getPrompt({ name: 'fx__greet', arguments: { name: 'Ada' } });
    await host.client.complete({ ref: { type: 'ref/prompt', name: 'fx__greet' }, argument: { name: 'style', value: 'f' } });
    const [read] = rows(dataDir, `method = 'resources/read'`);
    expect(read).toMatchObject({ name: hello.uri, original_name: 'fixture://static/hello', upstream: 'fx', outcome: 'ok', arguments: null });
    const [prompt] = rows(dataDir, `method = 'prompts/get'`);
    expect(prompt).toMatchObject({ name: 'fx__greet', original_name: 'greet', arguments: '{"name":"Ada"}', outcome: 'ok' });
    const [completion] = rows(dataDir, `method = 'completion/complete'`);
    expect(completion).toMatchObject({ name: 'fx__greet', original_name: 'greet', upstream: 'fx', decision: 'allowed', rule: 'policy:default-allow', outcome: 'ok' });
    expect(JSON.parse(String(completion.arguments))).toMatchObject({ argument: { name: 'style', value: 'f' } });
  });

  it('a host trace context in _meta is kept as the trace id', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await host.client.callTool({
      name: 'fx__add',
      arguments: { a: 1, b: 2 },
      _meta: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    const [row] = rows(dataDir, `name = 'fx__add'`);
    expect(row.trace_id).toBe(traceId);
  });

  it('arguments nested thousands of levels deep are refused with -32602 and recorded, not lost', async () => {
    const accept = 'application/json, text/event-stream';
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'deep', version: '1' } } };
    const opened = await request(daemon.baseUrl).post('/mcp').set('Accept', accept).set('Content-Type', 'application/json').send(JSON.stringify(init)).expect(200);
    const sid = opened.headers['mcp-session-id'];
    // Written by hand: JSON.stringify itself gives up on values this deep.
    const body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fx__echo","arguments":{"text":${'['.repeat(10_000)}${']'.repeat(10_000)}}}}`;
    const res = await request(daemon.baseUrl).post('/mcp').set('Accept', accept).set('Content-Type', 'application/json').set('Mcp-Session-Id', sid).send(body);
    expect(res.body.error).toEqual({ code: -32602, message: 'Invalid params: nested deeper than 256 levels' });
    const row = await eventually(async () => rows(dataDir, `client_name = 'deep'`)[0]);
    expect(row).toMatchObject({ method: 'tools/call', name: 'fx__echo', decision: 'refused', rule: 'request:nested-too-deeply', error_code: -32602, upstream: null });
    expect(row.arguments_truncated).toBe(1); // cut at maxArgumentBytes (300 here), marker and all
  });

  it('lists, pings and initialize are not audit rows', () => {
    expect(rows(dataDir, `method NOT IN ('tools/call', 'resources/read', 'prompts/get', 'completion/complete') AND method NOT LIKE 'policy/%'`)).toEqual([]);
  });

  it('requests refused by the Host/Origin check are recorded, on /mcp and on /admin', async () => {
    await request(daemon.baseUrl).post('/mcp?sessionId=secret').set('Origin', 'https://evil.example').send({}).expect(403);
    await request(daemon.baseUrl).get('/admin/api/audit').set('Host', 'rebound.evil.example').expect(403);
    // The 403 does not wait for the row (nothing ran); it is committed right after.
    await eventually(() => rows(dataDir, `method = 'http'`).length === 2);
    const refusals = rows(dataDir, `method = 'http'`);
    expect(refusals).toEqual([
      expect.objectContaining({ name: 'POST /mcp', decision: 'refused', rule: 'security:origin', error_code: -32600 }),
      expect.objectContaining({ name: 'GET /admin/api/audit', decision: 'refused', rule: 'security:host' }),
    ]);
    expect(String(refusals[0].error_message)).toMatch(/evil\.example/);
  });

  it('secrets in a resource URI and in header name/value lists are redacted in the rows', async () => {
    // Built at run time, so that secret scanners see no credential-looking literal here.
    const accessToken = `TokValue${'7q'.repeat(8)}`;
    const bearer = `Zx9${'kP4'.repeat(8)}`;
    const uri = `fixture://items/redact-me?access_token=${accessToken}&auth=${encodeURIComponent(`Bearer ${bearer}`)}`;
    // Whether the fixture serves it or not, the request gets a row.
    await host.client.readResource({ uri }).catch(() => undefined);
    const basic = Buffer.from('alice:s3cret-pass-1').toString('base64');
    await host.client.callTool({
      name: 'fx__echo',
      arguments: {
        text: 'har pairs',
        headers: [
          { name: 'Accept', value: 'text/plain' },
          { name: 'Authorization', value: `Basic ${basic}` },
          { name: 'DB_PASSWORD', value: 'hunter2hunter2' },
        ],
        headerPairs: [['X-Api-Key', 'k3y-v4lue-k3y']],
      },
    });

    const [read] = rows(dataDir, `method = 'resources/read' AND name LIKE 'fixture://items/redact-me%'`);
    expect(read.name).toBe('fixture://items/redact-me?access_token=[REDACTED:secret-param]&auth=Bearer%20[REDACTED:bearer-token]');
    expect(read.original_name).toBe(read.name);
    const [call] = rows(dataDir, `name = 'fx__echo' AND arguments LIKE '%headerPairs%'`);
    expect(JSON.parse(String(call.arguments))).toEqual({
      text: 'har pairs',
      headers: [
        { name: 'Accept', value: 'text/plain' },
        { name: 'Authorization', value: '[REDACTED]' },
        { name: 'DB_PASSWORD', value: '[REDACTED]' },
      ],
      headerPairs: [['X-Api-Key', '[REDACTED]']],
    });
    for (const row of [read, call]) {
      const stored = JSON.stringify(row);
      for (const secret of [accessToken, bearer, basic, 'hunter2hunter2', 'k3y-v4lue-k3y']) expect(stored).not.toContain(secret);
    }
  });
});

describe('audit over stdio, and with completions off', () => {
  it('records the OS user as the principal of a stdio host', async () => {
    const dir = tempDir();
    const configPath = writeConfig({ mcpServers: { fx: stdioFixture() }, audit: { completions: false } }, dir);
    const host = await connectHost('stdio', { configPath });
    await host.client.callTool({ name: 'fx__echo', arguments: { text: 'over stdio' } });
    await host.client.complete({ ref: { type: 'ref/prompt', name: 'fx__greet' }, argument: { name: 'style', value: 'f' } });
    await host.close();
    const all = rows(join(dir, 'data'), `method NOT LIKE 'policy/%'`);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ auth_method: 'stdio', transport: 'stdio', name: 'fx__echo', outcome: 'ok' });
    expect(String(all[0].principal).length).toBeGreaterThan(0);
  });

  it('your own pattern finds a secret in the argv array of a command named in audit.redact.commands', async () => {
    const dir = tempDir();
    const redact = { patterns: ['(?<=acme-deploy .*--ticket )\\S+'], commands: ['acme-deploy'] };
    const configPath = writeConfig({ mcpServers: { fx: stdioFixture() }, audit: { redact } }, dir);
    const host = await connectHost('stdio', { configPath });
    const argv = ['/opt/acme/bin/acme-deploy', 'web', '--ticket', 'Tok3nValue99', '--force'];
    await host.client.callTool({ name: 'fx__echo', arguments: { text: 'deploy', argv, said: 'acme-deploy web --ticket Tok3nValue99' } });
    await host.close();
    const [row] = rows(join(dir, 'data'), `name = 'fx__echo'`);
    expect(JSON.parse(String(row.arguments))).toEqual({
      text: 'deploy',
      argv: ['/opt/acme/bin/acme-deploy', 'web', '--ticket', '[REDACTED:custom]', '--force'],
      said: 'acme-deploy web --ticket [REDACTED:custom]',
    });
  });
});

describe('strict mode when the database is locked by another process', () => {
  it('answers calls whose rows reach the journal, refuses new ones with -32013 while rows cannot be moved, and loses none', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    // A second between commits: the call made just after the lock is taken reaches the
    // daemon before the commit that finds the lock (and turns calls away), even on a busy box.
    const daemon = await startDaemon(writeConfig({ mcpServers: { fx: stdioFixture() }, audit: { flushMs: 1000 } }, dir));
    const host = await connectHost('streamable-http', { daemon });
    try {
      await host.client.callTool({ name: 'fx__echo', arguments: { text: 'before' } });
      const locker = new Database(join(dataDir, 'switchboard.sqlite'));
      locker.prepare('BEGIN IMMEDIATE').run();
      // Its row is safe in the journal, so it is answered; moving it into the database fails.
      await host.client.callTool({ name: 'fx__echo', arguments: { text: 'journaled' } });
      await eventually(async () => (await fetch(`${daemon.baseUrl}/readyz`)).status === 503, 10_000, 'the failure reported');
      // While rows cannot be moved, new calls are refused before they reach the upstream.
      await expect(host.client.callTool({ name: 'fx__echo', arguments: { text: 'refused' } })).rejects.toMatchObject({ code: -32013 });
      const ready = await fetch(`${daemon.baseUrl}/readyz`);
      expect(((await ready.json()) as { audit: Record<string, unknown> }).audit).toMatchObject({ writable: false });
      // The log line is written apart from the answer: it may arrive a moment after it.
      await eventually(() => /cannot write the audit log/.test(daemon.stderr()), 10_000, 'the failure logged');
      expect(daemon.stderr()).toMatch(/SQLITE_BUSY/);
      // The admin API reads what is committed, and says what is not yet.
      const page = (await (await fetch(`${daemon.baseUrl}/admin/api/audit?method=tools/call`)).json()) as { items: unknown[]; pending?: { rows: number; reason: string } };
      // 'before' may or may not have been committed before the lock; 'journaled' cannot be.
      expect(page.pending?.rows).toBeGreaterThanOrEqual(1);
      expect(page.items.length + page.pending!.rows).toBeGreaterThanOrEqual(2);
      expect(page.pending?.reason).toMatch(/SQLITE_BUSY/);

      locker.prepare('COMMIT').run();
      locker.close();
      await eventually(async () => (await fetch(`${daemon.baseUrl}/readyz`)).status === 200, 10_000, 'audit log writable again');
      await host.client.callTool({ name: 'fx__echo', arguments: { text: 'after' } });
      const texts = rows(dataDir, `method = 'tools/call'`).map((r) => [JSON.parse(String(r.arguments)).text, r.decision, r.error_code]);
      expect(texts).toEqual([
        ['before', 'allowed', null],
        ['journaled', 'allowed', null],
        ['refused', 'refused', -32013],
        ['after', 'allowed', null],
      ]);
    } finally {
      await host.close();
    }
  });
});

describe('strict mode when the data directory is deleted under the daemon', () => {
  it('refuses calls with -32013 saying so, instead of committing into a file no one can open', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const daemon = await startDaemon(writeConfig({ mcpServers: { fx: stdioFixture() }, audit: { flushMs: 50 } }, dir));
    const host = await connectHost('streamable-http', { daemon });
    try {
      await host.client.callTool({ name: 'fx__echo', arguments: { text: 'before' } });
      rmSync(dataDir, { recursive: true, force: true });
      // The first calls may still be answered (their rows reach the journal's open file);
      // the next commit finds the files gone, and from then on calls are refused.
      const refusal = await eventually(
        () => host.client.callTool({ name: 'fx__echo', arguments: { text: 'after' } }).then(() => undefined, (err: unknown) => err),
        10_000,
        'a call refused',
      );
      expect(refusal).toMatchObject({ code: -32013, message: expect.stringMatching(/switchboard\.sqlite was deleted while the daemon ran/) });
      expect((await fetch(`${daemon.baseUrl}/readyz`)).status).toBe(503);
      await eventually(() => /cannot write the audit log/.test(daemon.stderr()), 10_000, 'the failure logged');
    } finally {
      await host.close();
    }
  });
});

describe('relaxed mode', () => {
  it('answers before the commit, and SIGTERM commits everything still queued', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    // A flush window far longer than the test: only the shutdown flush can write these rows.
    const daemon = await startDaemon(writeConfig({ mcpServers: { fx: stdioFixture() }, audit: { mode: 'relaxed', flushMs: 60_000 } }, dir));
    const host = await connectHost('streamable-http', { daemon });
    for (let i = 0; i < 5; i++) await host.client.callTool({ name: 'fx__echo', arguments: { text: `relaxed ${i}` } });
    expect(rows(dataDir, `method = 'tools/call'`)).toEqual([]);
    await host.close();
    expect(await daemon.stop('SIGTERM')).toMatchObject({ code: 0 });
    expect(rows(dataDir, `method = 'tools/call'`)).toHaveLength(5);
  });
});
