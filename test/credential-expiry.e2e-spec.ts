import { dirname, join } from 'node:path';
import { SignJWT, type CryptoKey as JoseKey } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, writeConfig, type DaemonHandle } from './support/daemon.js';
import { runCli } from './support/cli.js';
import { startApiKeyDaemon } from './support/api-key-daemon.js';
import { openStream, type OpenStream } from './support/sse-client.js';
import { startJwksIssuer, type JwksIssuer } from './support/jwks-issuer.js';
import { INITIALIZE, MCP_ACCEPT } from './support/mcp-http.js';

/**
 * A credential that expires: an API key made with --expires, refused once it lapses without
 * the refusal naming it, and the sessions it opened ended with an audit row that does; a JWT
 * session that a host keeps alive past its first token by sending a reissued one, while a
 * session without one ends with its token. (Revoked keys: credential-lapse.e2e-spec.ts.)
 */

afterAll(stopAllDaemons);

describe('API keys that expire (auth.mode: required)', () => {
  let daemon: DaemonHandle;
  let configPath: string;
  let dataDir: string;

  beforeAll(async () => {
    ({ daemon, configPath, dataDir } = await startApiKeyDaemon());
  });

  it("an expired key's 401 does not name it either, on /mcp, /admin and the inbox sign-in; its audit row does", async () => {
    const since = lastRowId(dataDir);
    const made = runCli(['keys', 'create', '--config', configPath, '--name', 'erik', '--roles', 'admin', '--expires', '1s']);
    expect(made.code, made.stderr).toBe(0);
    const erik = made.stdout.trimEnd().split('\n').at(-1)!;
    // A second after it was made it lapses: wait for the refusal rather than for the clock. On a
    // loaded machine the key may still serve an initialize or more before that; each opens a
    // session, which the credential check then ends with a row of the same rule (name 'ended').
    // (A request that failed on the way but opened one anyway is retried by eventually; the
    // session it opened goes uncounted, and its 'ended' row, once in, fails the comparison below.)
    const opened: string[] = [];
    const res = await eventually(async () => {
      const answer = await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', erik).send(INITIALIZE);
      if (answer.status === 200) opened.push(answer.headers['mcp-session-id']);
      return answer.status === 401 ? answer : undefined;
    }, 15_000, 'the key to expire');
    expect(res.body.error.message).toMatch(/the API key expired/);
    expect(JSON.stringify(res.body) + res.headers['www-authenticate']).not.toContain('erik');
    const admin = await request(daemon.baseUrl).get('/admin/api/audit').set('X-API-Key', erik).expect(401);
    expect(admin.body.error.message).toMatch(/the API key expired/);
    expect(JSON.stringify(admin.body) + admin.headers['www-authenticate']).not.toContain('erik');
    const login = await request(daemon.baseUrl).post('/admin/inbox/login').send({ token: erik }).expect(401);
    expect(login.body.error.message).toBe('sign-in refused: the API key expired');
    // The three refusals' rows, and one 'ended' row for each session the key opened.
    const rows = await eventually(() => {
      const found = auditRows(dataDir, `id > ? AND rule = 'auth:expired-key'`, since);
      const refusals = found.filter((row) => row.method === 'http').length;
      const ends = found.filter((row) => row.method === 'session').length;
      return refusals >= 3 && ends >= opened.length ? found : undefined;
    }, 30_000, `the three refusals and ${opened.length} ended sessions`);
    const refusals = rows.filter((row) => row.method === 'http');
    const ends = rows.filter((row) => row.method === 'session');
    expect(refusals.map((row) => row.name).sort()).toEqual(['GET /admin/api/audit', 'POST /admin/inbox/login', 'POST /mcp']);
    expect(ends.map((row) => row.session_id).sort()).toEqual([...opened].sort());
    for (const row of ends) expect(row).toMatchObject({ principal: 'erik', name: 'ended', decision: 'unauthenticated' });
    // Every row of the rule names the key: a session's end as much as a refusal.
    expect(refusals.length + ends.length).toBe(rows.length);
    for (const row of rows) expect(String(row.error_message)).toContain("API key 'erik' expired");
  });

  it("a session whose key expires is ended, and its audit row names the key, as the refusals' rows do", async () => {
    // The key must outlive the initialize that opens the session, which a loaded machine may
    // delay past a short life: each try makes a new key that lives twice as long.
    let opened: { name: string; key: string; session: string } | undefined;
    for (const seconds of [2, 4, 8, 16]) {
      const name = `expiring-${seconds}`;
      const made = runCli(['keys', 'create', '--config', configPath, '--name', name, '--roles', 'dev', '--expires', `${seconds}s`]);
      expect(made.code, made.stderr).toBe(0);
      const key = made.stdout.trimEnd().split('\n').at(-1)!;
      const res = await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', key).send(INITIALIZE);
      if (res.status === 200) {
        opened = { name, key, session: res.headers['mcp-session-id'] };
        break;
      }
      // Only the key's lapse may stand in the way.
      expect(res.status).toBe(401);
      expect(res.body.error.message).toMatch(/the API key expired/);
    }
    if (!opened) throw new Error('no key lived long enough to open a session, at up to 16 s');
    const { name, key, session } = opened;
    const row = await eventually(() => auditRows(dataDir, `name = 'ended' AND session_id = ?`, session)[0], 60_000, 'the session to be ended');
    expect(row).toMatchObject({ method: 'session', principal: name, decision: 'unauthenticated', rule: 'auth:expired-key' });
    expect(String(row.error_message)).toBe(`the session was ended: API key '${name}' expired`);
    // Its host is told neither which key nor more than that it expired.
    const after = await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', key).set('Mcp-Session-Id', session)
      .send({ jsonrpc: '2.0', method: 'notifications/initialized' }).expect(401);
    expect(after.body.error.message).toMatch(/the API key expired/);
    expect(JSON.stringify(after.body) + after.headers['www-authenticate']).not.toContain(name);
  });
});

describe('a JWT session outlives its first token when the host sends a reissued one', () => {
  const ISSUER = 'https://issuer.test';
  const AUDIENCE = 'switchboard';
  let daemon: DaemonHandle;
  let jwks: JwksIssuer;
  let signingKey: JoseKey;

  /** A token for erin that expires at `exp` (epoch seconds); the same claims every time. */
  const tokenUntil = (exp: number) =>
    new SignJWT({ roles: ['dev'] })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject('erin')
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(signingKey);
  /** A token for erin that expires `seconds` from now. */
  const tokenFor = (seconds: number) => tokenUntil(Math.floor(Date.now() / 1000) + seconds);
  const initialize = (bearer: string) =>
    request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('Authorization', `Bearer ${bearer}`).send(INITIALIZE);
  const notify = async (session: string, bearer: string) =>
    (
      await request(daemon.baseUrl)
        .post('/mcp')
        .set('Accept', MCP_ACCEPT)
        .set('Authorization', `Bearer ${bearer}`)
        .set('Mcp-Session-Id', session)
        .send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    ).status;
  const ended = (session: string) => daemon.stderr().split('\n').some((line) => line.includes('ended a session') && line.includes(session));

  /** The two sessions of a short token, the control's streams, and the renewal of the other; what the test then watches. */
  interface Setup {
    renewed: string;
    control: string;
    stream: OpenStream;
    legacy: OpenStream;
    /** When the short token stops being accepted (epoch ms; clockToleranceSec is 0). */
    expiresAtMs: number;
  }

  /**
   * Opens two sessions with a token that lives `seconds`, the control session's GET stream and
   * an /sse stream with it, and renews the first session with a long token. Undefined when a
   * step failed as the short token's expiry makes it fail, and only once the token had expired:
   * a request with it refused (401), or the renewal finding its session ended by the check
   * (404). The machine then took longer than the token's life, and the caller tries a longer
   * one. Any other failure of a step fails the test.
   */
  const setUp = async (seconds: number): Promise<Setup | undefined> => {
    const exp = Math.floor(Date.now() / 1000) + seconds;
    const expiresAtMs = exp * 1000;
    const short = await tokenUntil(exp);
    const streams: OpenStream[] = [];
    // Whether a step's answer is the one expected; false if the token's expiry explains the one it got.
    const went = (what: string, status: number, expected: number, ifExpired = 401) => {
      if (status === expected) return true;
      // What expiry causes is decided at or after expiresAtMs, so it is seen after it too.
      if (status === ifExpired && Date.now() >= expiresAtMs) return false;
      throw new Error(`${what} answered ${status}, not ${expected} (nor ${ifExpired} after the ${seconds} s token expired)`);
    };
    const attempt = async (): Promise<Setup | undefined> => {
      const first = await initialize(short);
      if (!went('initialize (renewed)', first.status, 200)) return undefined;
      const second = await initialize(short);
      if (!went('initialize (control)', second.status, 200)) return undefined;
      const renewed = first.headers['mcp-session-id'] as string;
      const control = second.headers['mcp-session-id'] as string;
      if (!went('notifications/initialized (control)', await notify(control, short), 202)) return undefined;
      const stream = await openStream(daemon.mcpUrl, { Accept: 'text/event-stream', Authorization: `Bearer ${short}`, 'Mcp-Session-Id': control });
      streams.push(stream);
      if (!went('the GET stream', stream.status, 200)) return undefined;
      const legacy = await openStream(daemon.sseUrl, { Accept: 'text/event-stream', Authorization: `Bearer ${short}` });
      streams.push(legacy);
      if (!went('the /sse stream', legacy.status, 200)) return undefined;
      // The renewal: the renewed session is ended by the check unless this comes before the short token expires.
      if (!went('the renewal', await notify(renewed, await tokenFor(300)), 202, 404)) return undefined;
      return { renewed, control, stream, legacy, expiresAtMs };
    };
    const setup = await attempt();
    // A failed try's sessions end with its token; its streams are closed here.
    if (!setup) for (const stream of streams) stream.close();
    return setup;
  };

  beforeAll(async () => {
    jwks = await startJwksIssuer();
    [signingKey] = jwks.signingKeys;
    const { jwksUrl } = jwks;
    daemon = await startDaemon(
      writeConfig({
        log: { level: 'info' },
        auth: { mode: 'required', jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl, clockToleranceSec: 0, claims: { roles: 'roles' } } },
        mcpServers: { fx: stdioFixture() },
      }),
    );
  });
  afterAll(() => jwks?.close());

  it('a request with the reissued token extends the session; a session without one ends with its token, its GET stream and an /sse stream too, audited', { timeout: 180_000 }, async () => {
    // Warm-up, with a long token: the first token makes the daemon fetch the issuer's keys and
    // load its strategies, which alone can take a loaded machine longer than a short token lives.
    const warm = (await initialize(await tokenFor(300)).expect(200)).headers['mcp-session-id'] as string;
    expect(await notify(warm, await tokenFor(300))).toBe(202);
    const warmStream = await openStream(daemon.sseUrl, { Accept: 'text/event-stream', Authorization: `Bearer ${await tokenFor(300)}` });
    expect(warmStream.status).toBe(200);
    warmStream.close();
    // The setup must end before the short token does; each try gives it twice the life.
    let setup: Setup | undefined;
    for (const seconds of [3, 6, 12, 24]) if ((setup = await setUp(seconds))) break;
    if (!setup) throw new Error('the setup outlasted a short token of up to 24 s four times');
    const { renewed, control, stream, legacy, expiresAtMs } = setup;
    // The control session holds the same first token: the check that ends it would end the other too, unrenewed.
    const untilEnd = () => Math.max(0, expiresAtMs - Date.now()) + 30_000;
    await eventually(() => ended(control) || undefined, untilEnd(), 'the control session to end with its token');
    await eventually(() => stream.ended() || undefined, untilEnd(), 'its GET stream to end');
    await eventually(() => legacy.ended() || undefined, untilEnd(), 'the /sse stream of the same token to end');
    expect(ended(renewed)).toBe(false);
    // Still there: without the renewal the check would have ended it with the control (404 here).
    expect(await notify(renewed, await tokenFor(300))).toBe(202);
    const dataDir = join(dirname(daemon.configPath), 'data');
    const [row] = await eventually(() => auditRows(dataDir, `method = 'session' AND session_id = ?`, control)[0] ? auditRows(dataDir, `method = 'session' AND session_id = ?`, control) : undefined);
    expect(row).toMatchObject({ principal: 'erin', auth_method: 'jwt', name: 'ended', decision: 'unauthenticated', rule: 'auth:expired-token' });
  });
});

/** The id of the newest audit row (0 for none): rows a test's own actions write come after it. */
function lastRowId(dataDir: string): number {
  const [row] = auditRows(dataDir, 'id = (SELECT MAX(id) FROM audit_record)');
  return row ? Number(row.id) : 0;
}
