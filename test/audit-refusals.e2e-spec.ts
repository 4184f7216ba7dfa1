import { userInfo } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, type AuditRowRecord } from './support/audit-rows.js';
import { relayHost } from './support/hosts.js';
import { SWITCHBOARD_BIN, eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { createKey, runCli, type CliOptions } from './support/cli.js';

/**
 * Every refusal writes exactly one audit row, with what is known at that point and nothing
 * the caller sent as a secret: the paths an auditor would look for after a refusal, on the
 * transports where they differ (docs/audit.md, "What is recorded").
 */

afterAll(stopAllDaemons);

const cli = (configPath: string, args: string[], options?: CliOptions) => runCli([...args, '--config', configPath], options);

/** Polls until exactly the rows `where` picks have appeared (at least `count`), then returns them all. */
async function rowsOnceThere(dataDir: string, where: string, ...params: unknown[]): Promise<AuditRowRecord[]> {
  return eventually(() => {
    const found = auditRows(dataDir, where, ...params);
    return found.length > 0 ? found : undefined;
  }, 15_000, `rows where ${where}`);
}

describe('switchboard stdio and its SWITCHBOARD_API_KEY', () => {
  let configPath: string;
  let dataDir: string;

  beforeAll(() => {
    const dir = tempDir('sb-refusals-');
    dataDir = join(dir, 'data');
    configPath = writeConfig({ mcpServers: { fx: stdioFixture() } }, dir);
  });

  it("a key that does not serve (revoked, unknown) refuses the start, and the log has one row of it: a revoked key's is the key's, naming the user who ran it; an unknown key's is the user's", () => {
    const revokedKey = createKey(configPath, 'stdio-rita');
    expect(cli(configPath, ['keys', 'revoke', 'stdio-rita']).code).toBe(0);
    const unknownKey = `sbk_${'Q'.repeat(43)}`;
    for (const key of [revokedKey, unknownKey]) {
      const started = cli(configPath, ['stdio'], { input: '', env: { SWITCHBOARD_API_KEY: key } });
      expect(started.code).not.toBe(0);
    }
    const rows = auditRows(dataDir, `method = 'session' AND name = 'refused'`);
    expect(rows).toHaveLength(2);
    const user = userInfo().username;
    // As an HTTP request with a revoked key is (docs/audit.md): found by the key's name.
    expect(rows[0]).toMatchObject({
      principal: 'stdio-rita',
      auth_method: 'api-key',
      transport: 'stdio',
      decision: 'unauthenticated',
      rule: 'auth:revoked-key',
      error_message: `SWITCHBOARD_API_KEY is not a usable key: API key 'stdio-rita' was revoked (switchboard stdio run by OS user ${user})`,
      outcome: null,
    });
    expect(rows[1]).toMatchObject({ principal: user, auth_method: 'stdio', rule: 'auth:unknown-key', error_message: 'SWITCHBOARD_API_KEY is not a usable key: unknown API key' });
    expect(JSON.stringify(auditRows(dataDir))).not.toContain(revokedKey.slice(4));
    expect(JSON.stringify(auditRows(dataDir))).not.toContain('QQQQQQQQ');
  });

  it('a key revoked while it runs ends the process, and the log has one row of the end, for its session, as for an HTTP session', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [SWITCHBOARD_BIN, 'stdio', '--config', configPath],
      env: { ...getDefaultEnvironment(), SWITCHBOARD_API_KEY: createKey(configPath, 'stdio-sam') },
      stderr: 'ignore',
    });
    const client = new Client({ name: 'e2e-stdio-lapse', version: '1.0.0' });
    const closed = new Promise<void>((resolve) => (client.onclose = resolve));
    await client.connect(transport);
    await client.callTool({ name: 'fx__echo', arguments: { text: 'before the revoke' } });
    expect(cli(configPath, ['keys', 'revoke', 'stdio-sam']).code).toBe(0);
    await closed;
    const [call] = await rowsOnceThere(dataDir, `method = 'tools/call' AND principal = 'stdio-sam'`);
    const ended = auditRows(dataDir, `method = 'session' AND name = 'ended'`);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({
      principal: 'stdio-sam',
      auth_method: 'api-key',
      session_id: call.session_id,
      transport: 'stdio',
      decision: 'unauthenticated',
      rule: 'auth:revoked-key',
      error_message: "the session was ended: API key 'stdio-sam' was revoked",
    });
  });
});

describe('HTTP refusals of a credential (auth.mode: required)', () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  let key: string;

  beforeAll(async () => {
    const dir = tempDir('sb-refusals-');
    dataDir = join(dir, 'data');
    const configPath = writeConfig({ auth: { mode: 'required' }, policy: { defaultEffect: 'allow' }, mcpServers: { fx: stdioFixture() } }, dir);
    key = createKey(configPath, 'http-hal');
    daemon = await startDaemon(configPath);
  });

  const post = (headers: Record<string, string>) =>
    fetch(daemon.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fx__echo', arguments: {} } }),
    });

  it.each([
    ['two credentials', 'auth:two-credentials', () => ({ authorization: `Bearer ${key}`, 'x-api-key': key })],
    ['an empty X-API-Key', 'auth:malformed', () => ({ 'x-api-key': ' ' })],
  ])('%s: one row, whose message is the one the caller got, not mangled by the redaction of credentials', async (_what, rule, headers) => {
    const res = await post(headers());
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { message: string } };
    const rows = await rowsOnceThere(dataDir, `rule = ?`, rule);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ principal: 'anonymous', auth_method: 'none', method: 'http', name: 'POST /mcp', decision: 'unauthenticated', error_code: -32600 });
    expect(error.message).toBe(`Bad Request: ${String(rows[0].error_message)}`);
    expect(String(rows[0].error_message)).not.toContain('REDACTED');
  });

  it('another Authorization scheme (Basic, Token): the 401 of no credential, but its own rule and a message that names the scheme, never the value', async () => {
    for (const [scheme, credential] of [['Basic', 'Zm9vOmJhcjpiYXo='], ['Token', 'tok_0123456789abcdef']]) {
      const res = await post({ authorization: `${scheme} ${credential}` });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).not.toContain('error=');
      const { error } = (await res.json()) as { error: { message: string } };
      const rows = await rowsOnceThere(dataDir, `rule = 'auth:unsupported-scheme' AND error_message LIKE ?`, `%the ${scheme} scheme%`);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ principal: 'anonymous', auth_method: 'none', method: 'http', name: 'POST /mcp', decision: 'unauthenticated' });
      expect(String(rows[0].error_message)).toMatch(new RegExp(`^the Authorization header uses the ${scheme} scheme, which this gateway does not take; it takes an API key or token as a Bearer token`));
      expect(error.message).toBe(`Unauthorized: ${String(rows[0].error_message)}`);
      expect(JSON.stringify(rows[0])).not.toContain(credential);
    }
    expect(auditRows(dataDir, `rule = 'auth:missing'`)).toHaveLength(0);
  });

  it('in a session: each refusal of a recorded request is one row with the session, revision and request id; what the transport turns away before handling a message is none', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const send = async (body: unknown, headers: Record<string, string>) => {
      const res = await fetch(daemon.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, session: res.headers.get('mcp-session-id'), text: await res.text() };
    };
    const init = await send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'sweep', version: '1' } } }, auth);
    const session = { ...auth, 'mcp-session-id': init.session!, 'mcp-protocol-version': '2025-11-25' };
    expect((await send({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);
    let deep: unknown = 1;
    for (let i = 0; i < 300; i++) deep = { a: deep };
    const refusals: [number, string, Record<string, unknown>, string][] = [
      [11, 'tools/call', { name: 'fx__nope', arguments: {} }, 'catalog:unknown-tool'],
      [12, 'resources/read', { uri: `fixture://${'u'.repeat(17_000)}` }, 'request:uri-too-long'],
      [13, 'tools/call', { name: 'fx__echo', arguments: deep }, 'request:nested-too-deeply'],
      [14, 'tools/call', { name: 'fx__echo', arguments: {}, _meta: 5 }, 'request:invalid-meta'],
      // Params its method does not take: refused as malformed, not denied by a rule nobody wrote.
      [15, 'tools/call', { arguments: {} }, 'request:invalid-params'],
      [16, 'resources/read', { uri: 7 }, 'request:invalid-params'],
    ];
    for (const [id, method, params] of refusals) await send({ jsonrpc: '2.0', id, method, params }, session);
    // Turned away by the transport, before any of them is handled: no row (docs/audit.md).
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: `t${id}` } } });
    expect((await send(call(21), { ...session, 'mcp-protocol-version': '1999-01-01' })).status).toBe(400);
    expect((await send(call(22), { ...session, accept: 'application/json' })).status).toBe(406);
    expect((await send(call(23), { ...session, 'mcp-session-id': 'f'.repeat(32) })).status).toBe(404);
    expect((await send(JSON.stringify(call(24)).replace('"t24"', `"${'x'.repeat(17 * 1024 * 1024)}"`), session)).status).toBe(413);
    // A recorded call after them: once its row is in, so would theirs be.
    await send(call(25), session);
    const rows = await rowsOnceThere(dataDir, `session_id = ? AND request_id = '25'`, init.session);
    expect(rows).toHaveLength(1);
    for (const [id, method, , rule] of refusals) {
      const mine = auditRows(dataDir, `request_id = ?`, String(id));
      expect(mine, rule).toHaveLength(1);
      expect(mine[0], rule).toMatchObject({ principal: 'http-hal', auth_method: 'api-key', session_id: init.session, transport: 'streamable-http', protocol_version: '2025-11-25', client_name: 'sweep', method, rule, error_code: -32602, upstream: null });
      expect(String(mine[0].error_message)).toMatch(/^(Unknown tool|Invalid params)/);
      expect(mine[0]!.decision, rule).toBe(rule.startsWith('request:') ? 'refused' : 'denied');
    }
    expect(auditRows(dataDir, `request_id IN ('21', '22', '23', '24')`)).toEqual([]);
    expect(JSON.stringify(auditRows(dataDir))).not.toContain(key.slice(4));
  });
});

describe('the rows a call brings with it', () => {
  it('its approval and the questions its upstream asks during it (answered or refused) carry the call\'s trace id', async () => {
    const dir = tempDir('sb-refusals-');
    const dataDir = join(dir, 'data');
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, 'everyone: [ops]\nroles:\n  ops:\n    - { id: ask-first, confirm: call, tool: "fx__ask_elicitation" }\n');
    const daemon = await startDaemon(writeConfig({ policy: { file: policyFile }, mcpServers: { fx: stdioFixture() } }, dir));
    // Approves the approval form (it has the remember field) and names Ada to the tool's own question.
    const { client } = await relayHost(daemon, 'tracer', { elicitation: { form: {} } }, {
      elicitation: (p) => ((p.requestedSchema as { properties: Record<string, unknown> }).properties.remember ? { action: 'accept', content: {} } : { action: 'accept', content: { name: 'Ada' } }),
    });
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    await client.callTool({ name: 'fx__ask_elicitation', arguments: { message: 'who?' }, _meta: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
    // No roots capability: the upstream's roots/list is refused, and recorded all the same.
    await client.callTool({ name: 'fx__list_roots', arguments: {} });
    const [rootsCall] = await rowsOnceThere(dataDir, `method = 'tools/call' AND name = 'fx__list_roots'`);
    expect(rootsCall.trace_id).toMatch(/^[0-9a-f]{32}$/);
    const rows = auditRows(dataDir, `method != 'tools/call' AND method NOT LIKE 'policy/%'`);
    expect(rows.map((r) => [r.method, r.rule, r.trace_id])).toEqual([
      ['switchboard/approval', 'approval:host', traceId],
      ['elicitation/create', 'policy:default-allow', traceId],
      ['roots/list', 'relay:host-lacks-capability', rootsCall.trace_id],
    ]);
    await client.close();
  });
});
