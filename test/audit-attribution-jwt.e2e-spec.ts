import { join } from 'node:path';
import { generateKeyPair, SignJWT, type CryptoKey as JoseKey } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, type AuditRowRecord } from './support/audit-rows.js';
import { cliRunsTimeout, runCli } from './support/cli.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { startJwksIssuer, type JwksIssuer } from './support/jwks-issuer.js';
import { INITIALIZE, MCP_ACCEPT } from './support/mcp-http.js';

/**
 * Who an auditor finds a refused token's attempts under (docs/audit.md, docs/auth.md): a
 * token the issuer signed for this gateway, refused only for its time (expired, not yet
 * valid), is its principal's, as an accepted one is (`jwt:NAME`); a token whose signature or
 * audience fails is anonymous, since anyone can write any claim into one.
 */

afterAll(stopAllDaemons);

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'switchboard';

describe('attribution of refused JWT bearer tokens in the audit log', () => {
  let daemon: DaemonHandle;
  let configPath: string;
  let dataDir: string;
  let jwks: JwksIssuer;

  const now = () => Math.floor(Date.now() / 1000);
  const token = (sub: string, times: { exp: number; nbf?: number }, { key = jwks.signingKeys[0], audience = AUDIENCE }: { key?: JoseKey; audience?: string } = {}) =>
    new SignJWT({ sub, roles: ['dev'], ...times }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setAudience(audience).sign(key);
  const exported = (...filters: string[]): AuditRowRecord[] => {
    const run = runCli(['audit', 'export', '--format', 'jsonl', ...filters, '--config', configPath]);
    expect(run.code, run.stderr).toBe(0);
    return run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as AuditRowRecord);
  };

  beforeAll(async () => {
    jwks = await startJwksIssuer();
    const dir = tempDir('sb-attribution-jwt-');
    dataDir = join(dir, 'data');
    configPath = writeConfig({ auth: { mode: 'required', jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.jwksUrl } }, mcpServers: { fx: stdioFixture() } }, dir);
    daemon = await startDaemon(configPath);
  });
  afterAll(() => jwks?.close());

  it(
    "an expired token's refusals (/mcp, /admin, the inbox sign-in) are its principal's rows, found as jwt:NAME; a forged or misaddressed one's stay anonymous",
    async () => {
      const expired = await token('fay', { exp: now() - 3600 });
      const refused = [
        await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('Authorization', `Bearer ${expired}`).send(INITIALIZE).expect(401),
        await request(daemon.baseUrl).get('/admin/api/audit').set('Authorization', `Bearer ${expired}`).expect(401),
        await request(daemon.baseUrl).post('/admin/inbox/login').send({ token: expired }).expect(401),
      ];
      // What the caller is told is as before.
      for (const res of refused) expect(JSON.stringify(res.body) + String(res.headers['www-authenticate'])).toMatch(/the token expired/);
      // Claims nobody vouched for: signed by another key, or for another audience.
      const stranger = (await generateKeyPair('RS256')).privateKey;
      for (const bearer of [await token('gus', { exp: now() - 3600 }, { key: stranger }), await token('gus', { exp: now() - 3600 }, { audience: 'elsewhere' })]) {
        await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('Authorization', `Bearer ${bearer}`).send(INITIALIZE).expect(401);
      }

      const rows = await eventually(() => {
        const found = auditRows(dataDir, `method = 'http' AND rule IN ('auth:expired-token', 'auth:invalid-token')`);
        return found.length >= 5 ? found : undefined;
      }, 15_000, 'the five refusals');
      const expiredRows = rows.filter((row) => row.rule === 'auth:expired-token');
      expect(expiredRows.map((row) => row.name).sort()).toEqual(['GET /admin/api/audit', 'POST /admin/inbox/login', 'POST /mcp']);
      for (const row of expiredRows) expect(row).toMatchObject({ principal: 'fay', auth_method: 'jwt', decision: 'unauthenticated', error_message: 'the token expired' });
      const forged = rows.filter((row) => row.rule === 'auth:invalid-token');
      expect(forged).toHaveLength(2);
      for (const row of forged) expect(row).toMatchObject({ principal: 'anonymous', auth_method: 'none' });
      expect(rows.some((row) => row.principal === 'gus')).toBe(false);

      expect(exported('--principal', 'jwt:fay').filter((row) => row.rule === 'auth:expired-token')).toHaveLength(3);
    },
    cliRunsTimeout(2),
  );

  it("a token not yet valid is its principal's row too", async () => {
    const early = await token('hal', { nbf: now() + 3600, exp: now() + 7200 });
    await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('Authorization', `Bearer ${early}`).send(INITIALIZE).expect(401);
    const [row] = await eventually(() => {
      const found = auditRows(dataDir, `method = 'http' AND error_message LIKE '%not valid yet (nbf: %'`);
      return found.length > 0 ? found : undefined;
    });
    expect(row).toMatchObject({ principal: 'hal', auth_method: 'jwt', decision: 'unauthenticated', rule: 'auth:invalid-token' });
  });
});
