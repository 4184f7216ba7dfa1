import { request as httpRequest } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startHttpFixture, type HttpFixture } from '@switchboard/testing';
import { generateKeyPair, SignJWT, type CryptoKey as JoseKey } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, SWITCHBOARD_BIN, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { createKey, runCli } from './support/cli.js';
import { startApiKeyDaemon } from './support/api-key-daemon.js';
import { auditRows, type AuditRowRecord } from './support/audit-rows.js';
import { expectNoCredentialIn, recordingProxy } from './support/recording-proxy.js';
import { startJwksIssuer, type JwksIssuer } from './support/jwks-issuer.js';
import { INITIALIZE, MCP_ACCEPT } from './support/mcp-http.js';

type Row = AuditRowRecord;

afterAll(stopAllDaemons);

describe('authentication with API keys (auth.mode: required)', () => {
  let daemon: DaemonHandle;
  let configPath: string;
  let dataDir: string;
  let keys: Record<string, string>;

  async function connect(key: string): Promise<Client> {
    const client = new Client({ name: 'e2e-auth', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
    );
    return client;
  }

  beforeAll(async () => {
    ({ daemon, configPath, dataDir, keys } = await startApiKeyDaemon({ alice: 'admin,dev', bob: 'dev', carol: '' }));
    for (const key of Object.values(keys)) expect(key).toMatch(/^sbk_[A-Za-z0-9_-]{43}$/);
  });

  it('no credential: 401 with a Bearer challenge naming the RFC 9728 metadata, which names the endpoint and issuer', async () => {
    const res = await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).send(INITIALIZE).expect(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="${daemon.baseUrl}/.well-known/oauth-protected-resource"`);
    expect(res.body.error.message).toMatch(/^Unauthorized: a credential is required/);
    const metadata = await request(daemon.baseUrl).get('/.well-known/oauth-protected-resource').expect(200);
    expect(metadata.body).toEqual({
      resource: `${daemon.mcpUrl}`,
      authorization_servers: ['https://login.example.com'],
      bearer_methods_supported: ['header'],
      resource_name: 'Switchboard MCP gateway',
    });
    await request(daemon.baseUrl).get('/.well-known/oauth-protected-resource/mcp').expect(200);
    const [row] = await eventually(() => {
      const found = auditRows(dataDir, `decision = 'unauthenticated' AND rule = 'auth:missing'`);
      return found.length > 0 ? found : undefined;
    });
    expect(row).toMatchObject({ principal: 'anonymous', method: 'http', name: 'POST /mcp' });
  });

  it('a key as a Bearer token: the SDK host calls tools, and the rows name the key as principal', async () => {
    const client = await connect(keys.bob);
    const result = await client.callTool({ name: 'fx__echo', arguments: { text: 'as bob' } });
    expect(result.content).toEqual([{ type: 'text', text: 'as bob' }]);
    await client.close();
    const [row] = auditRows(dataDir, `method = 'tools/call' AND arguments LIKE '%as bob%'`);
    expect(row).toMatchObject({ principal: 'bob', auth_method: 'api-key', decision: 'allowed', outcome: 'ok' });
  });

  it('a key as X-API-Key works too', async () => {
    const res = await request(daemon.baseUrl)
      .post('/mcp')
      .set('Accept', MCP_ACCEPT)
      .set('X-API-Key', keys.carol)
      .send(INITIALIZE)
      .expect(200);
    expect(res.headers['mcp-session-id']).toMatch(/^[0-9a-f]{32}$/);
  });

  it('an unknown key: 401 with error="invalid_token", recorded with its rule', async () => {
    const res = await request(daemon.baseUrl)
      .post('/mcp')
      .set('Accept', MCP_ACCEPT)
      .set('Authorization', `Bearer sbk_${'x'.repeat(43)}`)
      .send(INITIALIZE)
      .expect(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
    await eventually(() => auditRows(dataDir, `rule = 'auth:unknown-key'`).length > 0 || undefined);
  });

  it('a session belongs to its principal: another key cannot use its id', async () => {
    const opened = await request(daemon.baseUrl)
      .post('/mcp')
      .set('Accept', MCP_ACCEPT)
      .set('Authorization', `Bearer ${keys.alice}`)
      .send(INITIALIZE)
      .expect(200);
    const session = opened.headers['mcp-session-id'];
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const asBob = await request(daemon.baseUrl)
      .post('/mcp')
      .set('Accept', MCP_ACCEPT)
      .set('Authorization', `Bearer ${keys.bob}`)
      .set('Mcp-Session-Id', session)
      .send(list);
    expect(asBob.status).toBe(404);
    await request(daemon.baseUrl)
      .post('/mcp')
      .set('Accept', MCP_ACCEPT)
      .set('Authorization', `Bearer ${keys.alice}`)
      .set('Mcp-Session-Id', session)
      .send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      .expect(202);
  });

  it('the admin API needs the admin role: none 401, dev 403 (recorded as bob), admin 200', async () => {
    await request(daemon.baseUrl).get('/admin/api/audit').expect(401);
    const denied = await request(daemon.baseUrl).get('/admin/api/audit').set('X-API-Key', keys.bob).expect(403);
    expect(denied.body.error.message).toMatch(/admin/);
    await request(daemon.baseUrl).get('/admin/api/audit').set('Authorization', `Bearer ${keys.alice}`).expect(200);
    const [row] = await eventually(() => {
      const found = auditRows(dataDir, `rule = 'auth:admin-role'`);
      return found.length > 0 ? found : undefined;
    });
    expect(row).toMatchObject({ principal: 'bob', auth_method: 'api-key', decision: 'denied', name: 'GET /admin/api/audit' });
  });

  it('keys list shows each key once used; a revoked key is refused from the next request', async () => {
    const listed = runCli(['keys', 'list', '--config', configPath, '--json']);
    expect(listed.code).toBe(0);
    const byName = Object.fromEntries((JSON.parse(listed.stdout) as Row[]).map((k) => [k.name, k]));
    expect(byName.bob).toMatchObject({ roles: ['dev'], status: 'active' });
    expect(byName.bob.lastUsedAt).toEqual(expect.any(Number));
    expect(JSON.stringify(byName)).not.toContain(keys.bob);

    expect(runCli(['keys', 'revoke', '--config', configPath, 'carol']).code).toBe(0);
    const res = await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', keys.carol).send(INITIALIZE).expect(401);
    expect(res.body.error.message).toMatch(/revoked/);
    // Whoever holds the revoked key is not told whose it was; the audit row says.
    expect(res.body.error.message).not.toContain('carol');
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    expect(res.headers['www-authenticate']).not.toContain('carol');
    const admin = await request(daemon.baseUrl).get('/admin/api/audit').set('X-API-Key', keys.carol).expect(401);
    expect(JSON.stringify(admin.body) + admin.headers['www-authenticate']).not.toContain('carol');
    const row = await eventually(() => auditRows(dataDir, `rule = 'auth:revoked-key'`)[0]);
    expect(String(row.error_message)).toContain("API key 'carol' was revoked");
    expect(runCli(['keys', 'revoke', '--config', configPath, 'carol']).code).toBe(1);
  });

  it("the inbox sign-in with a revoked key does not name it; its audit row does", async () => {
    const fern = createKey(configPath, 'fern', 'dev');
    expect(runCli(['keys', 'revoke', '--config', configPath, 'fern']).code).toBe(0);
    const login = await request(daemon.baseUrl).post('/admin/inbox/login').send({ token: fern }).expect(401);
    expect(login.body.error.message).toBe('sign-in refused: the API key was revoked');
    expect(JSON.stringify(login.body)).not.toContain('fern');
    const row = await eventually(() => auditRows(dataDir, `rule = 'auth:revoked-key' AND name = 'POST /admin/inbox/login'`)[0], 15_000, 'the refused sign-in row');
    expect(String(row.error_message)).toContain("API key 'fern' was revoked");
  });

  it("a revoked key's open streams end too: the session's GET stream and a legacy SSE stream", async () => {
    const dave = createKey(configPath, 'dave', 'dev');
    const opened = await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', dave).send(INITIALIZE).expect(200);
    const sid = opened.headers['mcp-session-id'];
    await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', dave).set('Mcp-Session-Id', sid)
      .send({ jsonrpc: '2.0', method: 'notifications/initialized' }).expect(202);
    // Resolves once the stream's headers are in, with what resolves when it ends.
    const open = (path: string, headers: Record<string, string>) =>
      new Promise<{ status: number; ended: Promise<void> }>((resolve, reject) => {
        const req = httpRequest(`${daemon.baseUrl}${path}`, { headers: { Accept: 'text/event-stream', 'X-API-Key': dave, ...headers } }, (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, ended: new Promise((done) => res.on('end', done)) });
        });
        req.on('error', reject);
        req.end();
      });
    const streams = await Promise.all([open('/mcp', { 'Mcp-Session-Id': sid }), open('/sse', {})]);
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    expect(runCli(['keys', 'revoke', '--config', configPath, 'dave']).code).toBe(0);
    await Promise.all(streams.map((s) => s.ended));
  });

  it('switchboard stdio runs as the key in SWITCHBOARD_API_KEY, and refuses to start with a bad one', async () => {
    const client = new Client({ name: 'e2e-stdio-key', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [SWITCHBOARD_BIN, 'stdio', '--config', configPath],
        env: { ...getDefaultEnvironment(), SWITCHBOARD_API_KEY: keys.alice },
        stderr: 'ignore',
      }),
    );
    await client.callTool({ name: 'fx__echo', arguments: { text: 'stdio as alice' } });
    await client.close();
    await eventually(() => auditRows(dataDir, `arguments LIKE '%stdio as alice%' AND principal = 'alice'`).length > 0 || undefined);

    const bad = runCli(['stdio', '--config', configPath], { input: '', env: { SWITCHBOARD_API_KEY: keys.carol } });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/SWITCHBOARD_API_KEY is not a usable key: API key 'carol' was revoked/);
  });

  it('switchboard stdio ends, saying why on stderr, once its key is revoked while it runs', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [SWITCHBOARD_BIN, 'stdio', '--config', configPath],
      env: { ...getDefaultEnvironment(), SWITCHBOARD_API_KEY: createKey(configPath, 'stdio-frank') },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'e2e-stdio-revoked', version: '1.0.0' });
    const closed = new Promise<void>((resolve) => (client.onclose = resolve));
    await client.connect(transport);
    await client.callTool({ name: 'fx__echo', arguments: { text: 'before the revoke' } });
    const revoked = runCli(['keys', 'revoke', '--config', configPath, 'stdio-frank']);
    expect(revoked.stdout).toContain('switchboard stdio processes using it end within 2 s');
    await closed;
    expect(stderr).toMatch(/switchboard stdio: ending: SWITCHBOARD_API_KEY stopped working: API key 'stdio-frank' was revoked/);
  });
});

describe('JWT bearer tokens from an OIDC issuer (auth.jwt)', () => {
  const ISSUER = 'https://issuer.test';
  const AUDIENCE = 'switchboard';
  let daemon: DaemonHandle;
  let dataDir: string;
  let jwks: JwksIssuer;
  let signingKey: JoseKey;
  let strangerKey: JoseKey;

  const token = (claims: Record<string, unknown> = {}, set: (jwt: SignJWT) => SignJWT = (jwt) => jwt, key = signingKey) =>
    set(
      new SignJWT({ realm: { roles: ['dev'] }, groups: 'eng ops', ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject('erin@example.com')
        .setIssuedAt()
        .setExpirationTime('5m'),
    ).sign(key);

  const initializeWith = (bearer: string) =>
    request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('Authorization', `Bearer ${bearer}`).send(INITIALIZE);

  beforeAll(async () => {
    // The issuer's JWKS, served by the test as an identity provider would.
    jwks = await startJwksIssuer();
    [signingKey] = jwks.signingKeys;
    strangerKey = (await generateKeyPair('RS256')).privateKey;
    const dir = tempDir();
    dataDir = join(dir, 'data');
    const { jwksUrl } = jwks;
    daemon = await startDaemon(
      writeConfig(
        {
          auth: { mode: 'required', jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl, claims: { roles: 'realm.roles' } } },
          policy: { defaultEffect: 'allow' },
          mcpServers: { fx: stdioFixture() },
        },
        dir,
      ),
    );
  });
  afterAll(() => jwks?.close());

  it('a valid token: the SDK host calls tools as the token subject, auth method jwt', async () => {
    const client = new Client({ name: 'e2e-jwt', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${await token()}` } } }),
    );
    await client.callTool({ name: 'fx__echo', arguments: { text: 'as erin' } });
    await client.close();
    const [row] = auditRows(dataDir, `arguments LIKE '%as erin%'`);
    expect(row).toMatchObject({ principal: 'erin@example.com', auth_method: 'jwt', decision: 'allowed' });
  });

  it('a session keeps the roles it was opened with: a reissued token with other roles gets 404, one with the same roles carries on', async () => {
    const opened = await initializeWith(await token({ realm: { roles: ['dev', 'ops'] } })).expect(200);
    const session = opened.headers['mcp-session-id'];
    const inSession = async (bearer: string) =>
      request(daemon.baseUrl)
        .post('/mcp')
        .set('Accept', MCP_ACCEPT)
        .set('Authorization', `Bearer ${bearer}`)
        .set('Mcp-Session-Id', session)
        .send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect((await inSession(await token({ realm: { roles: ['dev'] } }))).status).toBe(404);
    expect((await inSession(await token({ realm: { roles: ['dev', 'ops'] }, groups: 'eng' }))).status).toBe(404);
    expect((await inSession(await token({ realm: { roles: ['ops', 'dev'] }, groups: 'ops eng' }))).status).toBe(202);
  });

  it('a token whose groups include names of Object properties (constructor, __proto__) is served like any other', async () => {
    // The policy looks groups up by name: these once found Object's own, and every request answered -32603.
    const client = new Client({ name: 'e2e-jwt-groups', version: '1.0.0' });
    const bearer = await token({ groups: 'constructor __proto__ eng' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('fx__echo');
    expect(await client.callTool({ name: 'fx__echo', arguments: { text: 'grouped' } })).toMatchObject({ content: [{ type: 'text', text: 'grouped' }] });
    await client.close();
  });

  it('a JWT sent in X-API-Key is told where a JWT goes, without the value being echoed; a key-shaped value is not', async () => {
    const bearer = await token();
    const res = await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', bearer).send(INITIALIZE);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/unknown API key: this looks like a JWT, which goes in the Authorization header as a Bearer token, not in X-API-Key/);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token", error_description="unknown API key: this looks like a JWT');
    const payloadPart = bearer.split('.')[1]!;
    expect(res.text + String(res.headers['www-authenticate'])).not.toContain(payloadPart);
    const plain = await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', 'sbk_notakey').send(INITIALIZE);
    expect(plain.body.error.message).toMatch(/unknown API key$/);
    const rows = await eventually(() => {
      const found = auditRows(dataDir, `rule = 'auth:unknown-key' AND error_message LIKE '%looks like a JWT%'`);
      return found.length > 0 ? found : undefined;
    });
    expect(rows[0]!.error_message).toBe('unknown API key: this looks like a JWT, which goes in the Authorization header as a Bearer token, not in X-API-Key');
  });

  it('a token user without the admin role is told the admin API needs a key or token with it (403)', async () => {
    const res = await request(daemon.baseUrl).get('/admin/api/audit').set('Authorization', `Bearer ${await token()}`);
    expect(res.status).toBe(403);
    expect(JSON.stringify(res.body)).toContain("the admin API needs an API key or token with the 'admin' role");
  });

  it('the metadata names the issuer as an authorization server', async () => {
    const metadata = await request(daemon.baseUrl).get('/.well-known/oauth-protected-resource').expect(200);
    expect(metadata.body.authorization_servers).toEqual([ISSUER]);
  });

  it.each([
    ['expired', () => token({}, (jwt) => jwt.setExpirationTime(Math.floor(Date.now() / 1000) - 120)), 'auth:expired-token', /expired/],
    ['for another audience', () => token({}, (jwt) => jwt.setAudience('someone-else')), 'auth:invalid-token', /"aud"/],
    ['from another issuer', () => token({}, (jwt) => jwt.setIssuer('https://evil.test')), 'auth:invalid-token', /"iss"/],
    ['signed by another key', () => token({}, (jwt) => jwt, strangerKey), 'auth:invalid-token', /signature/],
    ['unsigned (alg: none)', async () => unsigned({ iss: ISSUER, aud: AUDIENCE, sub: 'mallory', exp: Math.floor(Date.now() / 1000) + 300 }), 'auth:invalid-token', /.+/],
  ])('a token %s is refused with 401 and recorded, in a row of its own', async (_what, make, rule, reason) => {
    // Four of these share a rule: a row of an earlier one must not pass for this one's.
    const before = auditRows(dataDir, `rule = ?`, rule).length;
    const res = await initializeWith(await make());
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(res.body.error.message).toMatch(reason);
    const rows = await eventually(() => {
      const found = auditRows(dataDir, `rule = ?`, rule);
      return found.length > before ? found : undefined;
    }, 15_000, `a new ${rule} row`);
    expect(rows).toHaveLength(before + 1);
    expect(rows.at(-1)).toMatchObject({ decision: 'unauthenticated', method: 'http', name: 'POST /mcp' });
    expect(String(rows.at(-1)!.error_message)).toMatch(reason);
  });
});

/** An IPv4 address of this machine that is not 127.0.0.1: a network interface's, else 127.0.0.2 (Linux answers all of 127/8). */
function offLoopbackAddress(): string {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i?.family === 'IPv4' && !i.internal);
  return external?.address ?? '127.0.0.2';
}

/** An unsecured JWT, as an attacker would send one: header {"alg":"none"}, no signature. */
function unsigned(payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.`;
}

describe('a downstream credential never reaches an upstream', () => {
  let fixture: HttpFixture;
  afterAll(async () => {
    await fixture?.stop();
  });

  it('the key a host sends is in no header of any request to an HTTP upstream', async () => {
    fixture = await startHttpFixture('http');
    const proxy = await recordingProxy(fixture.url);
    const dir = tempDir();
    const configPath = writeConfig({ auth: { mode: 'required' }, policy: { defaultEffect: 'allow' }, mcpServers: { web: { type: 'http', url: proxy.url } } }, dir);
    const key = createKey(configPath, 'dave');
    const daemon = await startDaemon(configPath);
    // Both ways a key can be sent, one host each (both at once is refused: auth:two-credentials).
    for (const headers of [{ Authorization: `Bearer ${key}` }, { 'X-API-Key': key }] as Record<string, string>[]) {
      const client = new Client({ name: 'e2e-no-forward', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers } }));
      await client.callTool({ name: 'web__echo', arguments: { text: 'through the proxy' } });
      await client.close();
    }
    await daemon.stop();
    proxy.server.close();
    expect(proxy.seen.length).toBeGreaterThan(0);
    expectNoCredentialIn(proxy.seen, key);
  });
});

describe('auth.mode and the listen address', () => {
  it('with auth.mode: required the daemon listens off loopback; none refuses (see cli.e2e-spec)', async () => {
    const daemon = await startDaemon(writeConfig({ auth: { mode: 'required' }, mcpServers: {} }), ['--host', '0.0.0.0']);
    expect(new URL(daemon.baseUrl).hostname).toBe('0.0.0.0');
    // Reached through an address that is not 127.0.0.1, which a loopback-only listener would
    // not answer: this machine's own address on a network, or else 127.0.0.2.
    const offLoopback = `http://${offLoopbackAddress()}:${new URL(daemon.baseUrl).port}`;
    const res = await request(offLoopback).post('/mcp').set('Accept', MCP_ACCEPT).send(INITIALIZE);
    expect(res.status).toBe(401);
    await daemon.stop();
  });

  it('keys create refuses a bad name or --expires as usage errors (exit 2)', () => {
    const configPath = writeConfig({ mcpServers: {} });
    expect(runCli(['keys', 'create', '--config', configPath, '--name', 'has space']).code).toBe(2);
    expect(runCli(['keys', 'create', '--config', configPath, '--name', 'ok', '--expires', 'soon']).code).toBe(2);
    expect(runCli(['keys', 'create', '--config', configPath]).code).toBe(2);
  });
});

describe('refusals without a credential, in bulk', () => {
  it('the first 100 a minute from one address are rows of their own; the rest are counted in one row, written at the latest at shutdown', async () => {
    const dir = tempDir();
    const daemon = await startDaemon(writeConfig({ auth: { mode: 'required' }, mcpServers: {} }, dir));
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    for (let i = 0; i < 130; i++) {
      // Every one is answered 401 all the same: only the recording is bounded.
      await request(daemon.baseUrl)
        .post('/mcp')
        .set('Authorization', 'Bearer sbk_bogus')
        .set('User-Agent', 'brute/1.0')
        .set('Accept', 'application/json, text/event-stream')
        .send(ping)
        .expect(401);
    }
    expect(await daemon.stop('SIGTERM')).toMatchObject({ code: 0 });
    const dataDir = join(dir, 'data');
    const refusedRows = auditRows(dataDir, `decision = 'unauthenticated' AND rule = 'auth:unknown-key'`);
    expect(refusedRows).toHaveLength(100);
    // Where each came from, for whoever correlates failed sign-ins: the client's address and User-Agent.
    expect(JSON.parse(String(refusedRows[0]!.arguments))).toEqual({ clientAddress: expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/), userAgent: 'brute/1.0' });
    const [counted] = auditRows(dataDir, `rule = 'audit:refusals-counted'`);
    expect(counted).toMatchObject({ principal: 'switchboard', method: 'http', name: 'POST /mcp', decision: 'unauthenticated' });
    expect(String(counted.error_message)).toMatch(/^30 more HTTP refusals from (::ffff:)?127\.0\.0\.1, .* were counted, not recorded one by one/);
  });
});
