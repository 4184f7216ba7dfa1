import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SignJWT, type CryptoKey as JoseKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { openStream } from './support/sse-client.js';
import { startJwksIssuer, type JwksIssuer } from './support/jwks-issuer.js';
import { startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'switchboard';

afterAll(stopAllDaemons);

/**
 * One account, its name in another case: an issuer's preferred_username (the principal claim
 * here) may carry the case its user typed at sign-in. A deny written for the user, and the
 * user's rate limit, must hold for every spelling.
 */
describe('a token user whose name arrives in another case', () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  let jwks: JwksIssuer;
  let signingKey: JoseKey;

  /** Calls fx__echo as the token user `name`; the answer's isError and text, or the JSON-RPC error. */
  const tokenFor = (name: string) =>
    new SignJWT({ preferred_username: name })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(`idp-${name}`)
      .setExpirationTime('5m')
      .sign(signingKey);
  const callAs = async (name: string, text: string) => {
    const bearer = await tokenFor(name);
    const client = new Client({ name: 'e2e-case', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
    try {
      const result = await client.callTool({ name: 'fx__echo', arguments: { text } });
      return { ok: true, text: String((result.content as { text: string }[])[0]?.text) };
    } catch (err) {
      return { ok: false, text: String(err) };
    } finally {
      await client.close();
    }
  };

  beforeAll(async () => {
    jwks = await startJwksIssuer({ publishAlg: false });
    [signingKey] = jwks.signingKeys;
    const dir = tempDir();
    dataDir = join(dir, 'data');
    writeFileSync(
      join(dir, 'policy.yaml'),
      [
        'roles:',
        '  dev: [ { id: tools, allow: call, tool: "*" } ]',
        '  blocked: [ { id: mallory-blocked, deny: "*" } ]',
        'users: { "jwt:mallory": [blocked] }',
        'everyone: [dev]',
      ].join('\n'),
    );
    const { jwksUrl } = jwks;
    daemon = await startDaemon(
      writeConfig(
        {
          auth: { mode: 'required', jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl, claims: { principal: 'preferred_username' } } },
          policy: { file: 'policy.yaml', defaultEffect: 'deny' },
          rateLimits: { perPrincipal: { points: 2, durationSec: 3600 }, sessionsPerPrincipal: 1 },
          mcpServers: { fx: stdioFixture() },
        },
        dir,
      ),
    );
  });
  afterAll(() => jwks?.close());

  it("a deny written for jwt:mallory holds for Mallory and MALLORY too", async () => {
    for (const name of ['mallory', 'Mallory', 'MALLORY']) {
      const outcome = await callAs(name, `as ${name}`);
      expect(outcome.ok, name).toBe(false);
    }
    expect(auditRows(dataDir, `method = 'tools/call' AND decision = 'denied' AND rule = 'mallory-blocked'`).map((row) => row.principal).sort()).toEqual([
      'MALLORY',
      'Mallory',
      'mallory',
    ]);
  });

  it('one rate-limit bucket for dana, Dana and DANA', async () => {
    expect(await callAs('dana', 'one')).toEqual({ ok: true, text: 'one' });
    expect(await callAs('Dana', 'two')).toEqual({ ok: true, text: 'two' });
    const third = await callAs('DANA', 'three');
    expect(third.ok).toBe(false);
    expect(third.text).toMatch(/Rate limited/);
  });

  it('one HTTP+SSE session for erin, Erin and ERIN under sessionsPerPrincipal: 1', async () => {
    const open = async (name: string) => openStream(daemon.sseUrl, { Accept: 'text/event-stream', Authorization: `Bearer ${await tokenFor(name)}` });
    const first = await open('erin');
    expect(first.status).toBe(200);
    for (const name of ['Erin', 'ERIN']) {
      const other = await open(name);
      expect(other.status, name).toBe(429);
      other.close();
    }
    first.close();
  });
});
