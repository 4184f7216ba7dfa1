import { mkdtempSync } from 'node:fs';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS } from '@switchboard/migrations';
import { migrate, openDatabase, sqliteConnection } from '@switchboard/persistence';
import type { DataSource } from 'typeorm';
import { afterEach, describe, expect, it } from 'vitest';
import { AUTH_ENTITIES } from './api-keys/api-key.entity.js';
import { ApiKeyNameTakenError, ApiKeyStore } from './api-keys/api-key-store.js';
import { ApiKeyVerifier } from './api-keys/api-key-verifier.js';
import { HttpAuthenticator, type AuthMode } from './http/http-authenticator.js';
import { bearerChallenge, protectedResourceMetadata, refusalAnswer, type RefusalAnswer } from './http/protected-resource.js';
import { isSameCaller, renewCredential, type AuthPrincipal } from './principal.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

async function keys(now = () => Date.now()) {
  const file = join(mkdtempSync(join(tmpdir(), 'sb-auth-')), 'switchboard.sqlite');
  const dataSource = await openDatabase({ file, entities: AUTH_ENTITIES, migrations: MIGRATIONS });
  await migrate(dataSource);
  open.push(dataSource);
  const db = sqliteConnection(dataSource);
  return { store: new ApiKeyStore(dataSource), verifier: new ApiKeyVerifier(db, now), db };
}

function request(headers: Record<string, string>): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.headers = { host: '127.0.0.1:8780', ...headers };
  return req;
}

describe('API keys', () => {
  it('a created key verifies as its name with its roles; only its hash and prefix are stored', async () => {
    const { store, verifier, db } = await keys();
    const { key, info } = await store.create({ name: 'alice', roles: ['dev', 'dev', 'ops'] });
    expect(key).toMatch(/^sbk_[A-Za-z0-9_-]{43}$/);
    expect(info).toMatchObject({ name: 'alice', roles: ['dev', 'ops'], prefix: key.slice(0, 10), revokedAt: null });
    expect(verifier.verify(key)).toEqual({ ok: true, principal: { id: 'alice', authMethod: 'api-key', roles: ['dev', 'ops'], credential: { keyId: info.id } } });
    expect(verifier.lapseOf(info.id)).toBeUndefined();
    const stored = JSON.stringify(db.prepare('SELECT * FROM api_key').all());
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(key.slice(10));
  });

  it("refuses unknown, revoked and expired keys, each with its own rule; a stored key's refusal names whose it was, for the audit row", async () => {
    let now = 1_000_000;
    const { store, verifier } = await keys(() => now);
    const unknown = verifier.verify('sbk_nope');
    expect(unknown).toMatchObject({ ok: false, rule: 'auth:unknown-key' });
    expect(unknown).not.toHaveProperty('attributedTo');
    const revoked = await store.create({ name: 'old', roles: [] });
    expect(await store.revoke('old')).toMatchObject([{ name: 'old' }]);
    expect(verifier.verify(revoked.key)).toMatchObject({ ok: false, rule: 'auth:revoked-key', attributedTo: { id: 'old', authMethod: 'api-key' } });
    const expiring = await store.create({ name: 'temp', roles: [], expiresAt: now + 1000 });
    expect(verifier.verify(expiring.key).ok).toBe(true);
    now += 1000;
    expect(verifier.verify(expiring.key)).toMatchObject({ ok: false, rule: 'auth:expired-key', attributedTo: { id: 'temp', authMethod: 'api-key' } });
  });

  it('says why a key a session was opened with no longer serves: revoked, expired or deleted', async () => {
    let now = 1_000_000;
    const { store, verifier, db } = await keys(() => now);
    const kept = await store.create({ name: 'kept', roles: [] });
    const revoked = await store.create({ name: 'gone', roles: [] });
    const expiring = await store.create({ name: 'temp', roles: [], expiresAt: now + 1000 });
    const both = await store.create({ name: 'both', roles: [], expiresAt: now + 1000 });
    await store.revoke('gone');
    await store.revoke('both');
    now += 1000;
    const auth = new HttpAuthenticator(verifier, () => 'required');
    // A key's principal carries its expiresAt as verify() copied it from the row: the session's view of it.
    const lapseOf = (keyId: number, expiresAt?: number) => auth.credentialLapse({ credential: { keyId, expiresAt } }, now);
    expect(lapseOf(kept.info.id)).toBeUndefined();
    expect(lapseOf(revoked.info.id)).toEqual({ rule: 'auth:revoked-key', reason: "API key 'gone' was revoked", told: 'the API key was revoked', attributedTo: { id: 'gone', authMethod: 'api-key' } });
    expect(lapseOf(expiring.info.id)).toEqual({ rule: 'auth:expired-key', reason: "API key 'temp' expired", told: 'the API key expired', attributedTo: { id: 'temp', authMethod: 'api-key' } });
    // The lapse comes from the key's row, as a request's refusal does: the audit row of the
    // session it ends names the key (reason), and the caller is told without the name (told).
    expect(lapseOf(expiring.info.id, now)).toEqual({ rule: 'auth:expired-key', reason: "API key 'temp' expired", told: 'the API key expired', attributedTo: { id: 'temp', authMethod: 'api-key' } });
    // Revoked and expired both: revoked, as verify() says for a request with it.
    expect(lapseOf(both.info.id, now)).toEqual({ rule: 'auth:revoked-key', reason: "API key 'both' was revoked", told: 'the API key was revoked', attributedTo: { id: 'both', authMethod: 'api-key' } });
    expect(verifier.verify(both.key)).toMatchObject({ ok: false, rule: 'auth:revoked-key' });
    db.prepare('DELETE FROM api_key WHERE id = ?').run(kept.info.id);
    expect(lapseOf(kept.info.id)).toEqual({ rule: 'auth:unknown-key', reason: 'the API key was deleted' });
    expect(auth.credentialLapse({ credential: { expiresAt: now } }, now)).toEqual({ rule: 'auth:expired-token', reason: 'the token expired' });
    expect(auth.credentialLapse({}, now)).toBeUndefined();
  });

  it('a name is unique among active keys, and free again once revoked; revoke takes an id too', async () => {
    const { store } = await keys();
    const first = await store.create({ name: 'ci', roles: [] });
    await expect(store.create({ name: 'ci', roles: [] })).rejects.toBeInstanceOf(ApiKeyNameTakenError);
    expect(await store.revoke(String(first.info.id))).toMatchObject([{ name: 'ci' }]);
    await store.create({ name: 'ci', roles: ['deploy'] });
    expect((await store.list()).map((k) => [k.name, k.revokedAt === null])).toEqual([
      ['ci', true],
      ['ci', false],
    ]);
    expect(await store.revoke('nobody')).toEqual([]);
  });

  it('a name that differs from an active key only in case is taken: policies and limits match names without regard to case', async () => {
    const { store } = await keys();
    await store.create({ name: 'alice', roles: [] });
    await expect(store.create({ name: 'Alice', roles: [] })).rejects.toThrow("a key named 'alice' already exists");
    await expect(store.create({ name: 'ALICE', roles: [] })).rejects.toBeInstanceOf(ApiKeyNameTakenError);
    await store.revoke('alice');
    expect((await store.create({ name: 'Alice', roles: [] })).info.name).toBe('Alice');
  });

  it('refuses malformed names and roles, listing each', async () => {
    const { store } = await keys();
    await expect(store.create({ name: 'has space', roles: ['ok', 'bad role'] })).rejects.toThrow(/name 'has space'.*role 'bad role'/);
    // `keys revoke 2` is the key with id 2, so no key may be named 2.
    await expect(store.create({ name: '2', roles: [] })).rejects.toThrow(/name '2': must not be digits alone/);
    await expect(store.create({ name: 'build-2', roles: [] })).resolves.toBeDefined();
  });

  it('notes the last use, at most once a minute', async () => {
    let now = 5_000_000;
    const { store, verifier } = await keys(() => now);
    const { key } = await store.create({ name: 'bob', roles: [] });
    verifier.verify(key);
    expect((await store.list())[0].lastUsedAt).toBe(5_000_000);
    now += 30_000;
    verifier.verify(key);
    expect((await store.list())[0].lastUsedAt).toBe(5_000_000);
    now += 31_000;
    verifier.verify(key);
    expect((await store.list())[0].lastUsedAt).toBe(5_061_000);
  });

  it("forgets when it noted a key once a minute has passed: keys created, used once and revoked are not held for the daemon's life", async () => {
    let now = 5_000_000;
    const { store, verifier } = await keys(() => now);
    const made: Awaited<ReturnType<ApiKeyStore['create']>>[] = [];
    for (let n = 0; n < 50; n++) made.push(await store.create({ name: `job-${n}`, roles: [] }));
    for (const { key } of made) verifier.verify(key);
    expect(verifier.notedKeys).toBe(50);
    for (const { info } of made.slice(1)) await store.revoke(String(info.id));
    now += 61_000;
    verifier.verify(made[0].key);
    expect(verifier.notedKeys).toBe(1);
    // What it forgot is in the row: the once-a-minute rule still holds for a key used again.
    now += 1000;
    const other = await store.create({ name: 'later', roles: [] });
    verifier.verify(other.key);
    expect((await store.list()).find((k) => k.name === 'job-0')?.lastUsedAt).toBe(5_061_000);
    now += 30_000;
    verifier.verify(made[0].key);
    expect((await store.list()).find((k) => k.name === 'job-0')?.lastUsedAt).toBe(5_061_000);
  });
});

describe('HttpAuthenticator', () => {
  async function authenticator(mode: AuthMode) {
    const k = await keys();
    const { key } = await k.store.create({ name: 'carol', roles: ['admin'] });
    return { auth: new HttpAuthenticator(k.verifier, () => mode), key, store: k.store };
  }

  it('takes a key as a Bearer token or as X-API-Key', async () => {
    const { auth, key } = await authenticator('required');
    expect((await auth.authenticate(request({ authorization: `Bearer ${key}` }))).principal).toMatchObject({ id: 'carol', roles: ['admin'] });
    expect((await auth.authenticate(request({ 'x-api-key': key }))).principal).toMatchObject({ id: 'carol' });
  });

  it('mode required: no credential is refused; mode none: it is the anonymous loopback caller', async () => {
    expect((await (await authenticator('required')).auth.authenticate(request({}))).refusal).toMatchObject({ rule: 'auth:missing' });
    expect((await (await authenticator('none')).auth.authenticate(request({}))).principal).toMatchObject({ id: 'anonymous', authMethod: 'loopback' });
  });

  it('a presented credential must be valid even in mode none', async () => {
    const { auth, store, key } = await authenticator('none');
    expect((await auth.authenticate(request({ authorization: 'Bearer sbk_wrong' }))).refusal).toMatchObject({ rule: 'auth:unknown-key' });
    expect((await auth.authenticate(request({ 'x-api-key': 'nope' }))).refusal).toMatchObject({ rule: 'auth:unknown-key' });
    await store.revoke('carol');
    expect((await auth.authenticate(request({ authorization: `Bearer ${key}` }))).refusal).toMatchObject({ rule: 'auth:revoked-key' });
  });

  it('refuses a Bearer credential and an X-API-Key sent together, whichever is valid', async () => {
    const { auth, key } = await authenticator('none');
    for (const headers of [
      { authorization: `Bearer ${key}`, 'x-api-key': 'sbk_wrong' },
      { authorization: 'Bearer sbk_wrong', 'x-api-key': key },
      { authorization: `bearer ${key}`, 'x-api-key': key },
    ]) {
      expect((await auth.authenticate(request(headers))).refusal).toMatchObject({ rule: 'auth:two-credentials' });
    }
    // Another scheme beside X-API-Key is no second credential.
    expect((await auth.authenticate(request({ authorization: 'Basic Zm9vOmJhcg==', 'x-api-key': key }))).principal).toMatchObject({ id: 'carol' });
  });

  it('two Authorization or two X-API-Key headers are two credentials, whichever is valid: Node keeps only the first Authorization', async () => {
    // What Node's parser makes of repeated headers: the first Authorization alone in
    // headers, X-API-Key values joined with ", ", every line in rawHeaders.
    const repeated = (name: string, values: string[], merged: string) => {
      const req = request({ [name.toLowerCase()]: merged });
      req.rawHeaders = ['Host', '127.0.0.1:8780', ...values.flatMap((value, i) => [i % 2 ? name.toLowerCase() : name, value])];
      return req;
    };
    for (const mode of ['none', 'required'] as const) {
      const { auth, key } = await authenticator(mode);
      for (const req of [
        repeated('Authorization', [`Bearer ${key}`, 'Bearer sbk_wrong'], `Bearer ${key}`),
        repeated('Authorization', ['Basic Zm9vOmJhcg==', 'Bearer sbk_wrong'], 'Basic Zm9vOmJhcg=='),
        repeated('X-API-Key', [key, 'sbk_wrong'], `${key}, sbk_wrong`),
      ]) {
        expect((await auth.authenticate(req)).refusal, `${mode}: ${JSON.stringify(req.rawHeaders)}`).toMatchObject({
          rule: 'auth:two-credentials',
        });
      }
      // One of each line is one credential, as before.
      expect((await auth.authenticate(repeated('Authorization', [`Bearer ${key}`], `Bearer ${key}`))).principal).toMatchObject({ id: 'carol' });
    }
  });

  it('a Bearer credential or X-API-Key that is there but malformed is refused, not taken for no credential (mode none would serve it anonymously)', async () => {
    for (const mode of ['none', 'required'] as const) {
      const { auth, key } = await authenticator(mode);
      for (const headers of <Record<string, string>[]>[
        { authorization: `Bearer  ${key}` },
        { authorization: `Bearer\t${key}` },
        { authorization: 'Bearer' },
        { authorization: `Bearer ${key} ${key}` },
        { authorization: `Bearer "${key}"` },
        { 'x-api-key': '' },
      ]) {
        expect((await auth.authenticate(request(headers))).refusal, `${mode}: ${JSON.stringify(headers)}`).toMatchObject({ rule: 'auth:malformed' });
      }
      expect((await auth.authenticate(request({ authorization: `BEARER ${key}` }))).principal).toMatchObject({ id: 'carol' });
    }
    const answer = refusalAnswer(request({}), { rule: 'auth:malformed', reason: 'malformed' });
    expect(answer.status).toBe(400);
    expect(answer.headers['WWW-Authenticate']).toContain('error="invalid_request"');
  });

  it('mode required: another Authorization scheme is refused as auth:unsupported-scheme, naming the scheme and never its value; the answer is the 401 of no credential', async () => {
    const { auth, key } = await authenticator('required');
    const accepted = 'this gateway does not take; it takes an API key or token as a Bearer token in the Authorization header or in X-API-Key';
    const refusalOf = async (authorization: string) => (await auth.authenticate(request({ authorization }))).refusal;
    expect(await refusalOf('Basic Zm9vOmJhcg==')).toEqual({ rule: 'auth:unsupported-scheme', reason: `the Authorization header uses the Basic scheme, which ${accepted}` });
    expect((await refusalOf('token ghp_abcdefghijklmnop'))?.reason).toBe(`the Authorization header uses the Token scheme, which ${accepted}`);
    expect((await refusalOf('Digest username="ann", response="f00"'))?.reason).toMatch(/^the Authorization header uses the Digest scheme, /);
    // A scheme no registry knows may be a credential itself (a key sent without "Bearer"): not named.
    for (const authorization of [key, `${key} x`, 'Sekret-Scheme abc']) {
      const refusal = await refusalOf(authorization);
      expect(refusal).toEqual({ rule: 'auth:unsupported-scheme', reason: `the Authorization header uses a scheme other than Bearer, which ${accepted}` });
    }
    // An empty header sent no credential.
    expect(await refusalOf('')).toMatchObject({ rule: 'auth:missing' });
    // RFC 6750 section 3.1: an unsupported method gets the bare challenge, no error code.
    const req = request({});
    expect(refusalAnswer(req, { rule: 'auth:unsupported-scheme', reason: 'Basic' })).toMatchObject({ status: 401, headers: { 'WWW-Authenticate': bearerChallenge(req) } });
  });

  it('mode none: another Authorization scheme is not read, and the request is the anonymous loopback caller', async () => {
    const { auth } = await authenticator('none');
    expect((await auth.authenticate(request({ authorization: 'Basic Zm9vOmJhcg==' }))).principal).toMatchObject({ id: 'anonymous', authMethod: 'loopback' });
  });
});

describe('protected resource metadata (RFC 9728)', () => {
  it('names the MCP endpoint on the origin the caller used, and the 401 challenge points at it', () => {
    const req = request({ host: 'gw.example:8780' });
    expect(protectedResourceMetadata(req, ['https://issuer.example'])).toMatchObject({
      resource: 'http://gw.example:8780/mcp',
      authorization_servers: ['https://issuer.example'],
    });
    expect(bearerChallenge(req)).toBe('Bearer resource_metadata="http://gw.example:8780/.well-known/oauth-protected-resource"');
    expect(bearerChallenge(req, 'invalid_token', 'API key "x" was revoked')).toContain('error="invalid_token", error_description="API key x was revoked"');
  });

  it('answers each refusal by its rule (RFC 6750 3.1): 401 bare or invalid_token, 400 invalid_request for two credentials, 503 for a credential that could not be checked', () => {
    const req = request({ host: 'gw.example:8780' });
    const challenge = (answer: RefusalAnswer) => answer.headers['WWW-Authenticate'];
    expect(refusalAnswer(req, { rule: 'auth:missing', reason: 'none' })).toMatchObject({ status: 401, headers: { 'WWW-Authenticate': bearerChallenge(req) } });
    expect(challenge(refusalAnswer(req, { rule: 'auth:expired-token', reason: 'the token expired' }))).toContain('error="invalid_token"');
    expect(refusalAnswer(req, { rule: 'auth:revoked-key', reason: 'revoked' }).status).toBe(401);
    const two = refusalAnswer(req, { rule: 'auth:two-credentials', reason: 'two' });
    expect(two.status).toBe(400);
    expect(challenge(two)).toContain('error="invalid_request"');
    expect(refusalAnswer(req, { rule: 'auth:error', reason: 'keys unavailable' })).toEqual({ status: 503, statusText: 'Service Unavailable', headers: { 'Retry-After': '5' }, told: 'keys unavailable' });
    // While the issuer's keys cannot be had, the time until they are asked for again.
    expect(refusalAnswer(req, { rule: 'auth:error', reason: 'keys unavailable', retryAfterSec: 16 }).headers).toEqual({ 'Retry-After': '16' });
  });

  it('says https behind a TLS-terminating proxy (X-Forwarded-Proto), as the caller called it', () => {
    const req = request({ host: 'mcp.example.com', 'x-forwarded-proto': 'https, http' });
    expect(protectedResourceMetadata(req, [])).toMatchObject({ resource: 'https://mcp.example.com/mcp' });
    expect(bearerChallenge(req)).toBe('Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"');
  });
});

describe('HttpAuthenticator when the key table cannot be read', () => {
  it('fails closed with rule auth:error', async () => {
    const k = await keys();
    const { key } = await k.store.create({ name: 'erin', roles: [] });
    const broken = { verify: () => { throw new Error('SQLITE_IOERR'); } } as unknown as ApiKeyVerifier;
    const auth = new HttpAuthenticator(broken, () => 'none');
    expect((await auth.authenticate(request({ authorization: `Bearer ${key}` }))).refusal).toMatchObject({ rule: 'auth:error' });
    const unreadable = new HttpAuthenticator({ lapseOf: () => { throw new Error('SQLITE_IOERR'); } } as unknown as ApiKeyVerifier, () => 'none');
    expect(unreadable.credentialLapse({ credential: { keyId: 1 } })).toMatchObject({ rule: 'auth:error' });
  });
});

describe('renewCredential: a reissued token carries the session on', () => {
  it('takes the later expiry of a request in the session, never an earlier one', () => {
    const owner: AuthPrincipal = { id: 'erin', authMethod: 'jwt', roles: [], credential: { expiresAt: 1_000 } };
    renewCredential(owner, { ...owner, credential: { expiresAt: 301_000 } });
    expect(owner.credential).toEqual({ expiresAt: 301_000 });
    renewCredential(owner, { ...owner, credential: { expiresAt: 5_000 } });
    expect(owner.credential).toEqual({ expiresAt: 301_000 });
  });

  it('leaves a credential that never expires as it is', () => {
    const owner: AuthPrincipal = { id: 'alice', authMethod: 'api-key', roles: [], credential: { keyId: 3 } };
    renewCredential(owner, { ...owner, credential: { keyId: 3, expiresAt: 9_000 } });
    expect(owner.credential).toEqual({ keyId: 3 });
  });
});

describe('isSameCaller: who may go on in a session', () => {
  const owner = { id: 'erin', authMethod: 'jwt', roles: ['dev', 'ops'], groups: ['eng'] };

  it('the same principal, method, roles and groups, in any order', () => {
    expect(isSameCaller(owner, { id: 'erin', authMethod: 'jwt', roles: ['ops', 'dev'], groups: ['eng'] })).toBe(true);
  });

  it.each([
    ['another principal', { id: 'bob', authMethod: 'jwt', roles: ['dev', 'ops'], groups: ['eng'] }],
    ['a key with the same name', { id: 'erin', authMethod: 'api-key', roles: ['dev', 'ops'], groups: ['eng'] }],
    ['a token reissued with a role less', { id: 'erin', authMethod: 'jwt', roles: ['dev'], groups: ['eng'] }],
    ['a token reissued with a role more', { id: 'erin', authMethod: 'jwt', roles: ['dev', 'ops', 'admin'], groups: ['eng'] }],
    ['a token with other groups', { id: 'erin', authMethod: 'jwt', roles: ['dev', 'ops'] }],
  ])('not %s', (_what, caller) => {
    expect(isSameCaller(owner, caller)).toBe(false);
  });
});
