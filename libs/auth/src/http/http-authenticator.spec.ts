import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { createRedactor } from '@switchboard/audit';
import { describe, expect, it } from 'vitest';
import type { ApiKeyVerifier } from '../api-keys/api-key-verifier.js';
import { JwtVerifier } from '../jwt/jwt-verifier.js';
import { HttpAuthenticator } from './http-authenticator.js';

function request(headers: Record<string, string>): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.headers = { host: '127.0.0.1:8780', ...headers };
  return req;
}

describe('HttpAuthenticator: a request without a credential', () => {
  it('is told how to send one, in words the audit log stores as they are', async () => {
    // No credential: the verifier is never asked.
    const auth = new HttpAuthenticator({} as ApiKeyVerifier, () => 'required');
    const { refusal } = await auth.authenticate(request({}));
    expect(refusal?.rule).toBe('auth:missing');
    const reason = refusal!.reason;
    expect(reason).toMatch(/^a credential is required/);
    expect(reason).toMatch(/API key/);
    expect(reason).toMatch(/Bearer/);
    expect(reason).toMatch(/Authorization header/);
    expect(reason).toMatch(/X-API-Key/);
    // The row's error_message is the redacted reason (the host gets 'Unauthorized: ' + reason).
    expect(createRedactor().redactText(`Unauthorized: ${reason}`)).toBe(`Unauthorized: ${reason}`);
  });
});

describe('HttpAuthenticator: a credential of a scheme it does not take', () => {
  it('is told which scheme it sent and what is taken, in words the audit log stores as they are', async () => {
    const auth = new HttpAuthenticator({} as ApiKeyVerifier, () => 'required');
    for (const authorization of ['Basic Zm9vOmJhcg==', 'Token 0123456789abcdef0123', 'Negotiate YIIGhgYGKwYBBQUCoIIGejCCBnag', 'sbk_0123456789abcdef']) {
      const { refusal } = await auth.authenticate(request({ authorization }));
      expect(refusal?.rule).toBe('auth:unsupported-scheme');
      expect(refusal!.reason).not.toContain(authorization.split(' ').at(-1));
      expect(createRedactor().redactText(`Unauthorized: ${refusal!.reason}`)).toBe(`Unauthorized: ${refusal!.reason}`);
    }
  });
});

describe('HttpAuthenticator: where a credential is read from', () => {
  const good = 'sbk_good';
  const verifier = {
    verify: (key: string) =>
      key === good
        ? { ok: true, principal: { id: 'alice', authMethod: 'api-key', roles: ['admin'], groups: [] } }
        : { ok: false, rule: 'auth:unknown-key', reason: 'unknown API key' },
  } as unknown as ApiKeyVerifier;

  it('reads headers only: an access_token in the query string or the body is not a credential', async () => {
    const auth = new HttpAuthenticator(verifier, () => 'required');
    // As Express leaves an admin request: query and body parsed onto it.
    const req = Object.assign(request({ 'x-api-key': 'junk' }), { url: `/admin/inbox/items?access_token=${good}`, query: { access_token: good }, body: { access_token: good } });
    expect((await auth.authenticate(req)).refusal?.rule).toBe('auth:unknown-key');
    expect((await auth.authenticate(request({ authorization: `Bearer ${good}` }))).principal?.id).toBe('alice');
  });

  it('tells an X-API-Key that is a JWT where a JWT goes, when JWTs are taken; never with the value, and only for that shape', async () => {
    // Never asked: a value in X-API-Key is only ever checked as a key.
    const jwt = new JwtVerifier({
      issuer: 'https://idp.test',
      audience: 'gw',
      jwksUrl: 'http://127.0.0.1:1/jwks',
      algorithms: ['RS256'],
      clockToleranceSec: 30,
      requireAtJwt: false,
      maxTokenLifetimeSec: 86_400,
      claims: { principal: 'sub', roles: 'roles', groups: 'groups' },
    });
    const withJwt = new HttpAuthenticator(verifier, () => 'required', jwt);
    const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJmYXkifQ.c2lnbmF0dXJl';
    const refusal = (await withJwt.authenticate(request({ 'x-api-key': token }))).refusal!;
    expect(refusal).toMatchObject({ rule: 'auth:unknown-key', reason: expect.stringMatching(/^unknown API key: this looks like a JWT, which goes in the Authorization header as a Bearer token/) });
    expect(refusal.reason).not.toContain('eyJ');
    expect(createRedactor().redactText(`Unauthorized: ${refusal.reason}`)).toBe(`Unauthorized: ${refusal.reason}`);
    // Unsigned (an empty third part) is still a JWT's shape; two parts, or no JSON header, is not.
    expect((await withJwt.authenticate(request({ 'x-api-key': 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJmYXkifQ.' }))).refusal?.reason).toMatch(/looks like a JWT/);
    for (const other of ['eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJmYXkifQ', 'abc.def.ghi', 'sbk_nope', 'eyJ.a.b.c']) {
      expect((await withJwt.authenticate(request({ 'x-api-key': other }))).refusal?.reason, other).toBe('unknown API key');
    }
    // Without auth.jwt a JWT is refused in the Authorization header too: no hint to send it there.
    expect((await new HttpAuthenticator(verifier, () => 'required').authenticate(request({ 'x-api-key': token }))).refusal?.reason).toBe('unknown API key');
  });
});
