import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JwtConfig } from '@switchboard/config';
import { MAX_PRINCIPAL_CHARS } from '@switchboard/core';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JwtVerifier } from './jwt-verifier.js';

/** The options of a verifier for the test issuer, its keys at `jwksUrl`. */
const issuerOptions = (jwksUrl: string, clockToleranceSec = 0): JwtConfig => ({
  issuer: 'https://idp.test',
  audience: 'gw',
  jwksUrl,
  algorithms: ['ES256'],
  clockToleranceSec,
  requireAtJwt: false,
  maxTokenLifetimeSec: 86_400,
  claims: { principal: 'sub', roles: 'roles', groups: 'groups' },
});

const jwksUrlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;

/** A real JWKS over HTTP (jose fetches it), with a real RS256 key pair. */
describe('JwtVerifier', () => {
  let server: Server;
  let key: CryptoKey;
  let fetches = 0;
  let verifier: (claims?: Partial<{ principal: string; roles: string; groups: string }>) => JwtVerifier;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    key = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'a', alg: 'ES256' };
    server = createServer((_req, res) => {
      fetches += 1;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const jwksUrl = jwksUrlOf(server);
    verifier = (claims = {}) => {
      const options = issuerOptions(jwksUrl, 30);
      return new JwtVerifier({ ...options, claims: { ...options.claims, ...claims } });
    };
  });
  afterAll(() => server.close());

  const sign = (claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'a' })
      .setIssuer('https://idp.test')
      .setAudience('gw')
      .setExpirationTime('2m')
      .sign(key);

  it('maps principal, roles and groups from configured claim paths; lists may be arrays or space-separated', async () => {
    const v = verifier({ principal: 'email', roles: 'realm_access.roles', groups: 'grp' });
    const signedFrom = Math.floor(Date.now() / 1000);
    const token = await sign({ email: 'fay@example.com', realm_access: { roles: ['admin', 7] }, grp: 'eng  ops' });
    const signedBy = Math.floor(Date.now() / 1000);
    const verdict = await v.verify(token);
    expect(verdict).toEqual({
      ok: true,
      // The token's exp (2 minutes out), for the check of the session's streams.
      principal: { id: 'fay@example.com', authMethod: 'jwt', roles: ['admin'], groups: ['eng', 'ops'], credential: { expiresAt: expect.any(Number) } },
    });
    const expiresAt = (verdict as { principal: { credential: { expiresAt: number } } }).principal.credential.expiresAt;
    // exp (2 minutes after signing) plus the 30 s clock tolerance: the session check ends it
    // when verify would refuse it.
    expect(expiresAt).toBeGreaterThanOrEqual((signedFrom + 120 + 30) * 1000);
    expect(expiresAt).toBeLessThanOrEqual((signedBy + 120 + 30) * 1000);
  });

  it('a token past exp but within the clock tolerance holds until exp plus the tolerance, as verify says', async () => {
    const exp = Math.floor(Date.now() / 1000) - 10;
    const late = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer('https://idp.test').setAudience('gw').setExpirationTime(exp).sign(key);
    const verdict = await verifier().verify(late);
    expect(verdict).toMatchObject({ ok: true, principal: { credential: { expiresAt: (exp + 30) * 1000 } } });
  });

  it('refuses a token without the principal claim, or without exp', async () => {
    expect(await verifier().verify(await sign({ roles: [] }))).toMatchObject({ ok: false, rule: 'auth:invalid-token' });
    const noExp = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer('https://idp.test').setAudience('gw').sign(key);
    expect(await verifier().verify(noExp)).toMatchObject({ ok: false, rule: 'auth:invalid-token' });
  });

  it('refuses a principal name with control characters or over MAX_PRINCIPAL_CHARS (256), and a token issued in the future', async () => {
    const problem = /is not a usable principal name/;
    expect(await verifier().verify(await sign({ sub: 'alice\nbob' }))).toMatchObject({ ok: false, rule: 'auth:invalid-token', reason: expect.stringMatching(problem) });
    expect(await verifier().verify(await sign({ sub: 'x'.repeat(MAX_PRINCIPAL_CHARS + 1) }))).toMatchObject({ ok: false, reason: expect.stringMatching(problem) });
    expect(await verifier().verify(await sign({ sub: 'x'.repeat(MAX_PRINCIPAL_CHARS) }))).toMatchObject({ ok: true });
    expect((await verifier().verify(await sign({ sub: `${'x'.repeat(250)} ☃ é` }))).ok).toBe(true);
    const hourAhead = Math.floor(Date.now() / 1000) + 3600;
    expect(await verifier().verify(await sign({ sub: 'x', iat: hourAhead }))).toEqual({
      ok: false,
      rule: 'auth:invalid-token',
      reason: `the token's "iat" claim is in the future`,
      attributedTo: { id: 'x', authMethod: 'jwt' },
    });
    expect((await verifier().verify(await sign({ sub: 'x', iat: Math.floor(Date.now() / 1000) + 10 }))).ok).toBe(true); // within the 30 s tolerance
  });

  it('refuses a principal name that reads as another: invisible or direction-changing characters, or spaces around it', async () => {
    // Each would show as "alice" in the audit log and the CLI's tables, though it is another caller.
    const lookalikes = ['al\u200Bice', 'alice\u200D', '\u2060alice', 'alice\uFEFF', '\u202Eecila', 'alice\u2066', 'alice\u00AD', 'alice ', ' alice', 'alice\u00A0', '   '];
    for (const sub of lookalikes) {
      expect(await verifier().verify(await sign({ sub })), JSON.stringify(sub)).toMatchObject({
        ok: false,
        rule: 'auth:invalid-token',
        reason: expect.stringMatching(/is not a usable principal name/),
      });
    }
    // Spaces inside a name, and letters of any script, are names like any other.
    for (const sub of ['Alice Liddell', 'خدیجه', 'José Ñúñez', '山田 太郎']) expect((await verifier().verify(await sign({ sub }))).ok, sub).toBe(true);
  });

  it('refuses a token whose typ header says it is another kind of JWT (RFC 8725 3.11); takes none, JWT and at+jwt, application/ or not, in any case', async () => {
    const typed = (typ: unknown) =>
      new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: 'a', typ } as never).setIssuer('https://idp.test').setAudience('gw').setExpirationTime('2m').sign(key);
    for (const typ of [undefined, 'JWT', 'jwt', 'at+jwt', 'AT+JWT', 'application/at+jwt', 'Application/At+Jwt', 'application/jwt']) {
      expect((await verifier().verify(await typed(typ))).ok, String(typ)).toBe(true);
    }
    // A DPoP proof, a logout token, a security event, an ID token, a request object, a JWS of JSON, and what is no media type at all.
    for (const typ of ['dpop+jwt', 'logout+jwt', 'secevent+jwt', 'application/secevent+jwt', 'id_token+jwt', 'oauth-authz-req+jwt', 'JOSE', 'JOSE+JSON', 'text/jwt', 'at+jwt; q=1', '', 7]) {
      expect(await verifier().verify(await typed(typ)), String(typ)).toMatchObject({
        ok: false,
        rule: 'auth:invalid-token',
        reason: expect.stringMatching(/^the token's "typ" header .* not an access token/),
      });
    }
  });

  it('with requireAtJwt, takes only tokens typed at+jwt (RFC 9068)', async () => {
    const typed = (typ?: string) =>
      new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: 'a', ...(typ !== undefined && { typ }) }).setIssuer('https://idp.test').setAudience('gw').setExpirationTime('2m').sign(key);
    const strict = new JwtVerifier({ ...issuerOptions(jwksUrlOf(server)), requireAtJwt: true });
    for (const typ of ['at+jwt', 'application/AT+JWT']) expect((await strict.verify(await typed(typ))).ok, typ).toBe(true);
    for (const typ of [undefined, 'JWT', 'dpop+jwt']) {
      expect(await strict.verify(await typed(typ)), String(typ)).toMatchObject({ ok: false, rule: 'auth:invalid-token', reason: expect.stringMatching(/requireAtJwt/) });
    }
  });

  it('refuses a token whose exp is further away than maxTokenLifetimeSec (plus the clock tolerance)', async () => {
    const expiringIn = (seconds: number) =>
      new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer('https://idp.test').setAudience('gw').setExpirationTime(Math.floor(Date.now() / 1000) + seconds).sign(key);
    // The default cap, a day: a year-long token is a bearer credential nothing can revoke.
    expect((await verifier().verify(await expiringIn(86_000))).ok).toBe(true);
    const notes: { message: string; fields: Record<string, unknown> }[] = [];
    const noting = new JwtVerifier(issuerOptions(jwksUrlOf(server), 30), { onOperatorNote: (note) => notes.push(note) });
    expect(await noting.verify(await expiringIn(365 * 86_400))).toEqual({
      ok: false,
      rule: 'auth:invalid-token',
      // The audit row's: for the operator.
      reason: `the token's "exp" claim is 365 d away: more than this gateway accepts (auth.jwt.maxTokenLifetimeSec: 86400)`,
      // The client's: no setting of this gateway's.
      told: `the token's "exp" claim is 365 d away: its lifetime is longer than this gateway accepts (at most 86400 s)`,
      attributedTo: { id: 'x', authMethod: 'jwt' },
    });
    expect(notes).toEqual([
      {
        message: `refused a token of x for its lifetime: its "exp" claim is 365 d away, more than auth.jwt.maxTokenLifetimeSec (86400 s) accepts; raise the setting, or shorten the issuer's token lifetime`,
        fields: { principal: 'x', setting: 'auth.jwt.maxTokenLifetimeSec', maxTokenLifetimeSec: 86_400 },
      },
    ]);
    const capped = new JwtVerifier({ ...issuerOptions(jwksUrlOf(server), 30), maxTokenLifetimeSec: 600 });
    expect((await capped.verify(await expiringIn(600 + 20))).ok).toBe(true); // within the tolerance
    expect(await capped.verify(await expiringIn(3600))).toMatchObject({ ok: false, reason: expect.stringMatching(/"exp" claim is 1 h away/) });
    // Said as every other duration is (durationText): rounded up, not down to "2 hours".
    expect(await capped.verify(await expiringIn(2 * 3600 + 59 * 60))).toMatchObject({ ok: false, reason: expect.stringMatching(/"exp" claim is 2 h 59 min away/) });
  });

  it('a token refused only for its time (expired, not yet valid, too long-lived, issued in the future) names its principal, for the audit row only', async () => {
    const now = Math.floor(Date.now() / 1000);
    const signed = (claims: Record<string, unknown>) =>
      new SignJWT({ sub: 'fay', exp: now + 60, ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer('https://idp.test').setAudience('gw').sign(key);
    const fay = { id: 'fay', authMethod: 'jwt' };
    expect(await verifier().verify(await signed({ exp: now - 3600 }))).toEqual({ ok: false, rule: 'auth:expired-token', reason: 'the token expired', attributedTo: fay });
    expect(await verifier().verify(await signed({ nbf: now + 3600, exp: now + 7200 }))).toMatchObject({ ok: false, rule: 'auth:invalid-token', attributedTo: fay });
    expect(await verifier().verify(await signed({ exp: now + 30 * 86_400 }))).toMatchObject({ ok: false, reason: expect.stringMatching(/maxTokenLifetimeSec/), attributedTo: fay });
    expect(await verifier().verify(await signed({ iat: now + 3600 }))).toMatchObject({ ok: false, reason: expect.stringMatching(/"iat"/), attributedTo: fay });
    // Named as an accepted token would be: by the configured principal claim.
    const byEmail = verifier({ principal: 'email' });
    expect(await byEmail.verify(await signed({ email: 'fay@example.com', exp: now - 3600 }))).toMatchObject({ attributedTo: { id: 'fay@example.com', authMethod: 'jwt' } });
  });

  it('a token refused for anything but its time names nobody: claims nobody vouched for, or a token that would be refused in its time too', async () => {
    const now = Math.floor(Date.now() / 1000);
    const stranger = (await generateKeyPair('ES256')).privateKey;
    const expired = ({ by = key, iss = 'https://idp.test', aud = 'gw', typ, ...claims }: { by?: CryptoKey; iss?: string; aud?: string; typ?: string; [claim: string]: unknown } = {}) =>
      new SignJWT({ sub: 'fay', exp: now - 3600, iss, aud, ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'a', ...(typ && { typ }) }).sign(by);
    const refusals = [
      await verifier().verify(await expired({ by: stranger })),
      await verifier().verify(await expired({ aud: 'someone-else' })),
      await verifier().verify(await expired({ iss: 'https://evil.test' })),
      await verifier().verify(await expired({ typ: 'dpop+jwt' })),
      await verifier().verify(await expired({ sub: 'al\u200Bice' })),
      // No claim the verifier names callers by.
      await verifier({ principal: 'email' }).verify(await expired()),
      // Never valid: not before an hour from now, expired an hour ago.
      await verifier().verify(await expired({ nbf: now + 3600 })),
    ];
    for (const refusal of refusals) expect(refusal).toMatchObject({ ok: false });
    for (const refusal of refusals) expect(refusal).not.toHaveProperty('attributedTo');
  });

  it('says in words which claim was refused and why', async () => {
    const other = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer('https://idp.test').setAudience('someone-else').setExpirationTime('2m').sign(key);
    expect(await verifier().verify(other)).toEqual({ ok: false, rule: 'auth:invalid-token', reason: `the token's "aud" claim does not have the value this gateway expects` });
    const noExp = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer('https://idp.test').setAudience('gw').sign(key);
    expect(await verifier().verify(noExp)).toEqual({ ok: false, rule: 'auth:invalid-token', reason: `the token's "exp" claim is missing` });
  });

  it('says a token whose nbf is ahead is not valid yet, and for how long', async () => {
    const now = Math.floor(Date.now() / 1000);
    const early = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer('https://idp.test').setAudience('gw').setNotBefore(now + 600).setExpirationTime(now + 1200).sign(key);
    expect(await verifier().verify(early)).toMatchObject({ ok: false, rule: 'auth:invalid-token', reason: 'the token is not valid yet (nbf: 10 min from now)' });
  });

  it("tells the operator the aud or iss a refused token carried (the client is told only that it is not the expected one), cut to 200 characters", async () => {
    const notes: { message: string; fields: Record<string, unknown> }[] = [];
    const options = issuerOptions(jwksUrlOf(server), 30);
    const v = new JwtVerifier(options, { onOperatorNote: (note) => notes.push(note) });
    const addressed = (iss: string, aud: string | string[]) =>
      new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer(iss).setAudience(aud).setExpirationTime('2m').sign(key);
    expect(await v.verify(await addressed('https://idp.test', 'account'))).toEqual({ ok: false, rule: 'auth:invalid-token', reason: `the token's "aud" claim does not have the value this gateway expects` });
    expect(await v.verify(await addressed('https://idp.test/', 'gw'))).toMatchObject({ reason: `the token's "iss" claim does not have the value this gateway expects` });
    expect(await v.verify(await addressed('https://idp.test', ['account', 'broker']))).toMatchObject({ ok: false });
    const long = `aud-${'x'.repeat(400)}`;
    expect(await v.verify(await addressed('https://idp.test', long))).toMatchObject({ ok: false });
    // What would break the log line or hide in it is escaped.
    expect(await v.verify(await addressed('https://idp.test', 'acc\nount\u202E'))).toMatchObject({ ok: false });
    expect(notes.map((note) => note.message)).toEqual([
      'refused a token for its "aud" claim: it is "account", and auth.jwt.audience is "gw"',
      'refused a token for its "iss" claim: it is "https://idp.test/", and auth.jwt.issuer is "https://idp.test"',
      'refused a token for its "aud" claim: it is ["account","broker"], and auth.jwt.audience is "gw"',
      `refused a token for its "aud" claim: it is "${long.slice(0, 200)}..." (cut to 200 characters), and auth.jwt.audience is "gw"`,
      'refused a token for its "aud" claim: it is "acc\\nount\\u202e", and auth.jwt.audience is "gw"',
    ]);
    expect(notes[0]!.fields).toEqual({ claim: 'aud', value: 'account', setting: 'auth.jwt.audience' });
    // A signature that does not hold is not the issuer's: nothing of it is logged.
    const stranger = (await generateKeyPair('ES256')).privateKey;
    await v.verify(await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer('https://idp.test').setAudience('account').setExpirationTime('2m').sign(stranger));
    expect(notes).toHaveLength(5);
  });

  it('fetches the JWKS once and keeps it for later tokens', async () => {
    const v = verifier();
    const before = fetches;
    for (let i = 0; i < 5; i++) expect((await v.verify(await sign({ sub: `u${i}` }))).ok).toBe(true);
    expect(fetches - before).toBe(1);
  });

  it('an unreachable JWKS is an auth:error (fails closed), and garbage is an invalid token', async () => {
    const down = new JwtVerifier(issuerOptions('http://127.0.0.1:1/jwks'));
    expect(await down.verify(await sign({ sub: 'x' }))).toMatchObject({ ok: false, rule: 'auth:error' });
    expect(await verifier().verify('not.a.jwt')).toMatchObject({ ok: false, rule: 'auth:invalid-token' });
  });
});

describe('JwtVerifier with an issuer that fails', () => {
  it('refuses tokens with auth:error, says why once in the hook, and does not ask the issuer again on every token', async () => {
    let fetches = 0;
    const server = createServer((_req, res) => {
      fetches += 1;
      res.writeHead(500).end('down');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { privateKey } = await generateKeyPair('ES256');
      const reasons: string[] = [];
      const verifier = new JwtVerifier(issuerOptions(`http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`), {
        onKeysUnavailable: ({ reason }) => reasons.push(reason),
      });
      for (let i = 0; i < 30; i++) {
        const token = await new SignJWT({ sub: `u${i}` }).setProtectedHeader({ alg: 'ES256', kid: `k${i}` }).setIssuer('https://idp.test').setAudience('gw').setExpirationTime('2m').sign(privateKey);
        // Retry-After: the first backoff is 1 s, and less than that is rounded up to 1.
        expect(await verifier.verify(token)).toEqual({ ok: false, rule: 'auth:error', reason: "the issuer's signing keys could not be fetched", retryAfterSec: 1 });
      }
      expect(fetches).toBe(1);
      expect(reasons).toEqual(['the issuer answered HTTP 500']);
    } finally {
      server.close();
    }
  });
});

describe('JwtVerifier with several keys a token without a key id could be signed with', () => {
  let server: Server;
  let current: CryptoKey;
  let next: CryptoKey;
  let sixth: CryptoKey;
  let verifier: JwtVerifier;

  beforeAll(async () => {
    // A rotation in progress: the issuer publishes the old and the new key, of the same type
    // (and, in this set, four more: past the number of keys one token is tried against).
    const pairs = await Promise.all(Array.from({ length: 6 }, () => generateKeyPair('ES256')));
    [current, next] = pairs.map((pair) => pair.privateKey);
    sixth = pairs[5].privateKey;
    const jwks = { keys: await Promise.all(pairs.map(async (pair, i) => ({ ...(await exportJWK(pair.publicKey)), kid: `k${i}` }))) };
    server = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(jwks)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    verifier = new JwtVerifier(issuerOptions(`http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`));
  });
  afterAll(() => server.close());

  const withoutKid = (key: CryptoKey, audience = 'gw') =>
    new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256' }).setIssuer('https://idp.test').setAudience(audience).setExpirationTime('2m').sign(key);

  it('verifies a token without kid against each key of its type, and accepts it when one of them signed it', async () => {
    expect(await verifier.verify(await withoutKid(current))).toMatchObject({ ok: true, principal: { id: 'x' } });
    expect(await verifier.verify(await withoutKid(next))).toMatchObject({ ok: true, principal: { id: 'x' } });
  });

  it('refuses such a token when none of them signed it, or only a key past the first four; says why when one did but a claim is wrong', async () => {
    const stranger = (await generateKeyPair('ES256')).privateKey;
    expect(await verifier.verify(await withoutKid(stranger))).toEqual({ ok: false, rule: 'auth:invalid-token', reason: 'the token signature is not valid' });
    expect(await verifier.verify(await withoutKid(sixth))).toEqual({ ok: false, rule: 'auth:invalid-token', reason: 'the token signature is not valid' });
    expect(await verifier.verify(await withoutKid(next, 'elsewhere'))).toEqual({
      ok: false,
      rule: 'auth:invalid-token',
      reason: `the token's "aud" claim does not have the value this gateway expects`,
    });
  });
});
