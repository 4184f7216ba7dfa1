import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey as JoseKey, type JWTHeaderParameters } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { postRaw } from './support/raw-http.js';
import { startJwksIssuer, type JwksIssuer } from './support/jwks-issuer.js';
import { INITIALIZE, MCP_ACCEPT } from './support/mcp-http.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'switchboard';

afterAll(stopAllDaemons);

/** Tokens as a hostile or unusual issuer's callers would send them, through the real daemon. */
describe('JWT bearer tokens the gateway must judge with care', () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  let jwks: JwksIssuer;
  /** The issuer is rotating its keys: both are in its JWKS, both of type RSA. */
  let currentKey: JoseKey;
  let nextKey: JoseKey;
  /** The current key's public half as PEM: what an alg-confusion attacker signs HS256 with. */
  let currentPublicPem: string;

  const token = (sub: string, key: JoseKey, header: JWTHeaderParameters = { alg: 'RS256' }) =>
    new SignJWT({ roles: ['dev'] }).setProtectedHeader(header).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject(sub).setIssuedAt().setExpirationTime('5m').sign(key);
  const initializeWith = (bearer: string) =>
    request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('Authorization', `Bearer ${bearer}`).send(INITIALIZE);

  beforeAll(async () => {
    jwks = await startJwksIssuer({ keys: 2, publishAlg: false });
    [currentKey, nextKey] = jwks.signingKeys;
    currentPublicPem = await exportSPKI(jwks.publicKeys[0]!);
    const dir = tempDir();
    dataDir = join(dir, 'data');
    const { jwksUrl } = jwks;
    daemon = await startDaemon(
      // At info: what the operator is told of refused tokens is logged there.
      writeConfig(
        { auth: { mode: 'required', jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl } }, policy: { defaultEffect: 'allow' }, log: { level: 'info' }, mcpServers: { fx: stdioFixture() } },
        dir,
      ),
    );
  });
  afterAll(() => jwks?.close());

  it('a token without a key id is verified against each of the issuer keys of its type: either key of a rotation serves', async () => {
    for (const [sub, key] of [['fay', currentKey], ['gus', nextKey]] as const) {
      const client = new Client({ name: 'e2e-no-kid', version: '1.0.0' });
      const bearer = await token(sub, key);
      await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
      await client.callTool({ name: 'fx__echo', arguments: { text: `no kid, as ${sub}` } });
      await client.close();
      expect(auditRows(dataDir, `arguments LIKE ?`, `%no kid, as ${sub}%`)).toMatchObject([{ principal: sub, auth_method: 'jwt', decision: 'allowed' }]);
    }
  });

  it('a token without a key id that none of the keys signed is refused as a bad signature', async () => {
    const stranger = (await generateKeyPair('RS256')).privateKey;
    const res = await initializeWith(await token('mallory', stranger));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token", error_description="the token signature is not valid"');
    await eventually(() => auditRows(dataDir, `rule = 'auth:invalid-token' AND error_message LIKE '%signature%'`).length > 0 || undefined);
  });

  it('a token whose principal would read as another caller (a zero-width space, a bidi override, a trailing space) is refused', async () => {
    for (const sub of ['al\u200Bice', '\u202Eecila', 'alice ']) {
      const res = await initializeWith(await token(sub, currentKey, { alg: 'RS256', kid: 'k1' }));
      expect(res.status, JSON.stringify(sub)).toBe(401);
      expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
      expect(res.body.error.message).toMatch(/'sub' claim is not a usable principal name/);
    }
    await eventually(() => auditRows(dataDir, `rule = 'auth:invalid-token' AND error_message LIKE '%not a usable principal name%'`).length >= 3 || undefined);
  });

  it('a token whose typ header says it is another kind of JWT (a DPoP proof, a logout token) is refused; JWT and at+jwt serve', async () => {
    for (const typ of ['dpop+jwt', 'logout+jwt', 'application/secevent+jwt', '\u2603+jwt']) {
      const res = await initializeWith(await token('fay', currentKey, { alg: 'RS256', kid: 'k1', typ }));
      expect(res.status, typ).toBe(401);
      expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
      expect(res.body.error.message).toMatch(/"typ" header is .*another kind of JWT, not an access token/);
    }
    await eventually(() => auditRows(dataDir, `rule = 'auth:invalid-token' AND error_message LIKE '%another kind of JWT%'`).length >= 4 || undefined);
    for (const typ of ['JWT', 'at+jwt', 'application/at+jwt']) {
      expect((await initializeWith(await token('fay', currentKey, { alg: 'RS256', kid: 'k1', typ }))).status, typ).toBe(200);
    }
  });

  it('a token that expires further away than maxTokenLifetimeSec (a day by default) is refused; one within it serves', async () => {
    const expiringIn = (seconds: number) =>
      new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject('fay').setExpirationTime(Math.floor(Date.now() / 1000) + seconds).sign(currentKey);
    const res = await initializeWith(await expiringIn(30 * 86_400));
    expect(res.status).toBe(401);
    // The client learns the limit, not the setting's name; the operator's log and the audit row name it.
    expect(res.body.error.message).toMatch(/"exp" claim is 30 d away: its lifetime is longer than this gateway accepts \(at most 86400 s\)$/);
    expect(res.text + String(res.headers['www-authenticate'])).not.toContain('maxTokenLifetimeSec');
    const line = await daemon.waitForLog(/refused a token of fay for its lifetime/);
    expect(line).toContain('more than auth.jwt.maxTokenLifetimeSec (86400 s) accepts');
    await eventually(() => auditRows(dataDir, `rule = 'auth:invalid-token' AND error_message LIKE '%maxTokenLifetimeSec%'`).length > 0 || undefined);
    expect((await initializeWith(await expiringIn(12 * 3600))).status).toBe(200);
  });

  it("a token the issuer's keys did not sign is refused: HS256 keyed with the RSA public key (alg confusion), ES256 under an RSA key's kid, a key of its own in the jwk header", async () => {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claims = part({ iss: ISSUER, aud: AUDIENCE, sub: 'mallory', exp: Math.floor(Date.now() / 1000) + 300 });
    const signingInput = `${part({ alg: 'HS256', kid: 'k1', typ: 'JWT' })}.${claims}`;
    const confused = `${signingInput}.${createHmac('sha256', currentPublicPem).update(signingInput).digest('base64url')}`;
    const ec = await generateKeyPair('ES256');
    const embedded = await generateKeyPair('RS256');
    for (const [bearer, reason] of [
      [confused, 'the token is signed with an algorithm that is not accepted'],
      [await token('mallory', ec.privateKey, { alg: 'ES256', kid: 'k1' }), "no key of the issuer's JWKS matches the token"],
      [await token('mallory', embedded.privateKey, { alg: 'RS256', jwk: await exportJWK(embedded.publicKey) }), 'the token signature is not valid'],
    ] as const) {
      const res = await initializeWith(bearer);
      expect(res.status, reason).toBe(401);
      expect(res.headers['www-authenticate']).toContain(`error="invalid_token", error_description="${reason}"`);
      expect(res.text).not.toMatch(/at .+\.js:\d+/);
    }
    await eventually(() => auditRows(dataDir, `rule = 'auth:invalid-token' AND error_message = ?`, 'the token is signed with an algorithm that is not accepted').length > 0 || undefined);
  });

  it('nbf further in the future than the clock tolerance (30 s by default) is refused; within it the token serves', async () => {
    const notBefore = (seconds: number) =>
      new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject('fay').setNotBefore(Math.floor(Date.now() / 1000) + seconds).setExpirationTime('5m').sign(currentKey);
    const res = await initializeWith(await notBefore(600));
    expect(res.status).toBe(401);
    // 600 s after the token was made, less the time it took to send it.
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_token", error_description="the token is not valid yet \(nbf: (10 min|9 min 5\d s) from now\)"/);
    expect((await initializeWith(await notBefore(10))).status).toBe(200);
  });

  it("a token for another audience or issuer: the client is told which claim, the operator's log what the token carried (never the token)", async () => {
    const addressed = (iss: string, aud: string) =>
      new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(iss).setAudience(aud).setSubject('fay').setExpirationTime('5m').sign(currentKey);
    // Keycloak's default audience for a token asked for without one.
    const keycloakDefault = await addressed(ISSUER, 'account');
    const res = await initializeWith(keycloakDefault);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error_description="the token\'s aud claim does not have the value this gateway expects"');
    expect(res.text).not.toContain('account');
    const line = await daemon.waitForLog(/refused a token for its \\"aud\\" claim/);
    expect(line).toContain('it is \\"account\\", and auth.jwt.audience is \\"switchboard\\"');
    expect(line).toMatch(/"level":30/);
    const long = `https://${'a'.repeat(300)}.test`;
    expect((await initializeWith(await addressed(long, AUDIENCE))).status).toBe(401);
    const issLine = await daemon.waitForLog(/refused a token for its \\"iss\\" claim/);
    expect(issLine).toContain(`it is \\"${long.slice(0, 200)}...\\" (cut to 200 characters), and auth.jwt.issuer is \\"${ISSUER}\\"`);
    expect(issLine).not.toContain(long.slice(0, 201));
    // The token's signature, which only the token holds, is nowhere in the log.
    expect(daemon.stderr()).not.toContain(keycloakDefault.split('.')[2]);
  });

  it('a token sent with X-API-Key as well is a bad request (RFC 6750: more than one method), 400 invalid_request, whichever is valid', async () => {
    const res = await initializeWith(await token('fay', currentKey, { alg: 'RS256', kid: 'k1' })).set('X-API-Key', 'sbk_anything');
    expect(res.status).toBe(400);
    expect(res.headers['www-authenticate']).toContain('error="invalid_request"');
    expect(res.headers['www-authenticate']).not.toContain('invalid_token');
    await eventually(() => auditRows(dataDir, `rule = 'auth:two-credentials' AND decision = 'unauthenticated'`).length > 0 || undefined);
  });

  it('a Bearer header that holds no readable token (two spaces, a tab) is a bad request, 400 invalid_request, not a request without a credential', async () => {
    const bearer = await token('fay', currentKey, { alg: 'RS256', kid: 'k1' });
    for (const authorization of [`Bearer  ${bearer}`, `Bearer\t${bearer}`]) {
      const res = await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('Authorization', authorization).send(INITIALIZE);
      expect(res.status).toBe(400);
      expect(res.headers['www-authenticate']).toContain('error="invalid_request"');
    }
    await eventually(() => auditRows(dataDir, `rule = 'auth:malformed' AND decision = 'unauthenticated'`).length >= 2 || undefined);
  });

  it('two Authorization headers, or two X-API-Key headers, are a bad request, 400 invalid_request, though the first holds a valid token', async () => {
    // Node keeps the first Authorization line of a request and drops the rest: the second
    // went unchecked, so a valid token followed by anything was served.
    const bearer = await token('fay', currentKey, { alg: 'RS256', kid: 'k1' });
    for (const lines of [
      [`Authorization: Bearer ${bearer}`, 'Authorization: Bearer sbk_anything'],
      ['Authorization: Basic Zm9vOmJhcg==', `Authorization: Bearer ${bearer}`],
      ['X-API-Key: sbk_one', 'X-API-Key: sbk_two'],
    ]) {
      const res = await postRaw(daemon.baseUrl, '/mcp', lines, INITIALIZE);
      expect(res.status, lines.join(' | ')).toBe(400);
      expect(res.head).toMatch(/WWW-Authenticate: Bearer resource_metadata="[^"]+", error="invalid_request"/i);
      expect(res.body).not.toContain('"result"');
    }
    const rows = await eventually(() => {
      const found = auditRows(dataDir, `rule = 'auth:two-credentials' AND error_message LIKE '%header twice%'`);
      return found.length >= 3 ? found : undefined;
    });
    expect(rows.map((row) => row.error_message)).toEqual([
      'two credentials were sent, the Authorization header twice; send one',
      'two credentials were sent, the Authorization header twice; send one',
      'two credentials were sent, the API key (X-API-Key) header twice; send one',
    ]);
    expect(rows[0]).toMatchObject({ decision: 'unauthenticated', name: 'POST /mcp' });
  });
});

describe('a JWT when the issuer keys cannot be fetched', () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  let issuer: Server;
  let signingKey: JoseKey;
  /** The issuer's key set while it is up; until then its JWKS endpoint answers 503 to every fetch. */
  let keySet: string | undefined;
  let bringUp: () => void;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    signingKey = pair.privateKey;
    const published = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] });
    issuer = createServer((_req, res) => (keySet ? res.writeHead(200, { 'Content-Type': 'application/json' }).end(keySet) : res.writeHead(503).end('maintenance')));
    await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
    const dir = tempDir();
    dataDir = join(dir, 'data');
    const jwksUrl = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}/jwks.json`;
    daemon = await startDaemon(
      writeConfig(
        { auth: { mode: 'required', jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl } }, policy: { defaultEffect: 'allow' }, log: { level: 'info' }, mcpServers: { fx: stdioFixture() } },
        dir,
      ),
    );
    bringUp = () => (keySet = published);
  });
  afterAll(() => issuer?.close());

  it('is answered 503 with Retry-After, not 401 invalid_token: the token may be good, and an OAuth host told it is not signs its user in again', async () => {
    const bearer = await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject('fay').setExpirationTime('5m').sign(signingKey);
    const res = await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('Authorization', `Bearer ${bearer}`).send(INITIALIZE);
    expect(res.status).toBe(503);
    // The first token makes the first attempt; the issuer is asked again after 1 s.
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(res.body.error.message).toMatch(/signing keys could not be fetched/);
    await eventually(() => auditRows(dataDir, `rule = 'auth:error' AND decision = 'unauthenticated'`).length > 0 || undefined);
  });

  it("Retry-After is the time until the issuer is asked again, which grows with the backoff; the log says so, and when the keys are fetched again", async () => {
    const bearer = await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject('fay').setExpirationTime('5m').sign(signingKey);
    const send = () => request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('Authorization', `Bearer ${bearer}`).send(INITIALIZE);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // The test before made the first attempt and was told 1 s: past that, each request sent
    // once its Retry-After has passed makes the next attempt, and the backoff doubles.
    await sleep(1_200);
    const told: number[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await send();
      expect(res.status).toBe(503);
      told.push(Number(res.headers['retry-after']));
      if (i === 1) bringUp();
      await sleep(told.at(-1)! * 1000 + 200);
    }
    expect(told).toEqual([2, 4]);
    await daemon.waitForLog(/could not be fetched: the issuer answered HTTP 503; JWT callers are refused \(503\) until they can be; the issuer is asked again by the first token after 4 s/);
    expect((await send()).status).toBe(200);
    await daemon.waitForLog(/signing keys were fetched again, after 3 failed attempts/);
  });
});

describe('claim paths through keys that hold dots (Auth0 and Okta namespaced claims, Keycloak client ids that are URLs)', () => {
  // Only the role the claim grants allows the call: a claim that was not found gives no roles, and the call is denied.
  const POLICY = 'defaultEffect: deny\nroles:\n  dev:\n    - { id: dev-echo, allow: call, tool: fx__echo }\n';
  let jwks: JwksIssuer;

  beforeAll(async () => {
    jwks = await startJwksIssuer();
  });
  afterAll(() => jwks?.close());

  it.each([
    ['a namespaced top-level claim', 'https://corp.example.com/roles', { 'https://corp.example.com/roles': ['dev'] }],
    [
      'Keycloak client roles under a client id with dots',
      'resource_access.https://gateway.internal/mcp.roles',
      { resource_access: { account: { roles: ['manage-account'] }, 'https://gateway.internal/mcp': { roles: ['dev'] } } },
    ],
  ])('%s (claims.roles: %s) gives the token its roles, which the policy then allows', async (_what, rolesPath, claims) => {
    const dir = tempDir();
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    const daemon = await startDaemon(
      writeConfig(
        {
          auth: { mode: 'required', jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.jwksUrl, claims: { roles: rolesPath } } },
          policy: { file: 'policy.yaml' },
          mcpServers: { fx: stdioFixture() },
        },
        dir,
      ),
    );
    const bearer = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject('hana').setExpirationTime('5m').sign(jwks.signingKeys[0]!);
    const client = new Client({ name: 'e2e-dotted-claims', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
    expect(await client.callTool({ name: 'fx__echo', arguments: { text: 'dotted claim' } })).toMatchObject({ content: [{ type: 'text', text: 'dotted claim' }] });
    await client.close();
    expect(auditRows(join(dir, 'data'), `name = 'fx__echo'`)).toMatchObject([{ principal: 'hana', auth_method: 'jwt', decision: 'allowed', rule: 'dev-echo' }]);
    await daemon.stop();
  });
});
