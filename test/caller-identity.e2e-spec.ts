import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { MAX_PRINCIPAL_CHARS } from '@switchboard/core';
import { SignJWT, type CryptoKey as JoseKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { createKey, runCli } from './support/cli.js';
import { answerItem, inboxItems, pendingItem } from './support/inbox-client.js';
import { startJwksIssuer, type JwksIssuer } from './support/jwks-issuer.js';

type ToolResult = { content: { type: string; text?: string }[] };
const textOf = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'switchboard';
const POLICY = `everyone: [ops]
roles:
  ops:
    - { allow: call, server: own }
    - { id: ask-echo, confirm: call, tool: "shared__echo" }
`;

afterAll(stopAllDaemons);

/**
 * docs/auth.md#sessions: a key and a token with the same name are not the same caller. The
 * token's principal claim here is preferred_username, which the issuer's user sets: it says
 * `alice`, the name of an API key. Nothing keyed per caller may mix the two.
 */
describe('an API key and a token with the same name are two callers', () => {
  let daemon: DaemonHandle;
  let configPath: string;
  let dataDir: string;
  let jwks: JwksIssuer;
  let signingKey: JoseKey;
  let aliceKey: string;
  const clients: Client[] = [];

  const aliceToken = () =>
    new SignJWT({ preferred_username: 'alice' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject('idp-user-7f3a')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(signingKey);

  const setSecret = (principal: string, value: string) => {
    const r = runCli(['secrets', 'set', '--config', configPath, '--principal', principal, 'FIXTURE_TOKEN'], { input: `${value}\n` });
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };

  async function connect(bearer: string, name: string): Promise<Client> {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    jwks = await startJwksIssuer();
    [signingKey] = jwks.signingKeys;
    const dir = tempDir();
    dataDir = join(dir, 'data');
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, POLICY);
    configPath = writeConfig(
      {
        auth: {
          mode: 'required',
          jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.jwksUrl, claims: { principal: 'preferred_username' } },
        },
        policy: { file: policyFile },
        approvals: { timeoutMs: 15_000, rememberMs: [900_000] },
        mcpServers: {
          own: stdioFixture({ FIXTURE_TOKEN: '${secret:FIXTURE_TOKEN}', FIXTURE_NAME: 'own' }, { isolation: 'per-principal' }),
          shared: stdioFixture({ FIXTURE_NAME: 'shared' }),
        },
      },
      dir,
    );
    aliceKey = createKey(configPath, 'alice');
    setSecret('alice', 'key-alice-secret');
    daemon = await startDaemon(configPath);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    jwks?.close();
  });

  it("does not give the token the key's upstream secrets, nor its connection; `jwt:alice` names the token's", async () => {
    const key = await connect(aliceKey, 'key-alice');
    await eventually(async () => (await key.listTools()).tools.some((t) => t.name === 'own__env'), 15_000, 'the per-principal server');
    const token = await connect(await aliceToken(), 'token-alice');
    expect((await token.listTools()).tools.some((t) => t.name.startsWith('own__'))).toBe(false);
    const refused = await token.callTool({ name: 'own__env', arguments: { name: 'FIXTURE_TOKEN' } }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: -32010 });
    expect(String((refused as Error).message)).toContain('switchboard secrets set --principal jwt:alice FIXTURE_TOKEN < FILE');
    expect(String((refused as Error).message)).not.toContain('key-alice-secret');

    expect(setSecret('jwt:alice', 'token-alice-secret')).toBe('set secret FIXTURE_TOKEN for jwt:alice\n');
    await eventually(async () => (await token.listTools()).tools.some((t) => t.name === 'own__env'), 10_000, "the token's list to show the server");
    expect(textOf(await token.callTool({ name: 'own__env', arguments: { name: 'FIXTURE_TOKEN' } }))).toBe('token-alice-secret');
    expect(textOf(await key.callTool({ name: 'own__env', arguments: { name: 'FIXTURE_TOKEN' } }))).toBe('key-alice-secret');
    expect(runCli(['secrets', 'list', '--config', configPath, '--principal', 'key:alice']).stdout).toMatch(/^alice\s+FIXTURE_TOKEN/m);
    // A bare name that is no key's is most likely meant for the token user: the command says so.
    const bare = runCli(['secrets', 'set', '--config', configPath, '--principal', 'idp-user-7f3a', 'FIXTURE_TOKEN'], { input: 'x\n' });
    expect(bare.stderr).toContain("note: no API key is named 'idp-user-7f3a'");
    expect(bare.stderr).toContain('a token user is jwt:idp-user-7f3a');
    // A key's name in another case serves no key: the command names the key most likely meant.
    const cased = runCli(['secrets', 'set', '--config', configPath, '--principal', 'ALICE', 'OTHER_TOKEN'], { input: 'x\n' });
    expect(cased.stderr).toContain("note: no API key is named 'ALICE' (did you mean alice?)");
  });

  it('a token user with the longest principal claim a token may carry can be given secrets (jwt:NAME) and gets them', async () => {
    const name = 'u'.repeat(MAX_PRINCIPAL_CHARS);
    const longToken = await new SignJWT({ preferred_username: name })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(signingKey);
    const token = await connect(longToken, 'token-long-name');
    expect(setSecret(`jwt:${name}`, 'long-name-secret')).toBe(`set secret FIXTURE_TOKEN for jwt:${name}\n`);
    await eventually(async () => (await token.listTools()).tools.some((t) => t.name === 'own__env'), 10_000, "the token's list to show the server");
    expect(textOf(await token.callTool({ name: 'own__env', arguments: { name: 'FIXTURE_TOKEN' } }))).toBe('long-name-secret');
  });

  it("keeps the key's inbox questions from the token, and the key's remembered approval from the token's calls", async () => {
    const asToken = { Authorization: `Bearer ${await aliceToken()}` };
    const asKey = { Authorization: `Bearer ${aliceKey}` };
    const key = await connect(aliceKey, 'key-alice-approvals');
    const keyCall = key.callTool({ name: 'shared__echo', arguments: { text: 'from the key' } }).then(textOf);
    const keyItem = await pendingItem(daemon, (i) => JSON.stringify(i.arguments).includes('from the key'), asKey);
    expect(keyItem.principal).toBe('alice');
    expect(await inboxItems(daemon, asToken)).toEqual([]);
    expect(await answerItem(daemon, keyItem.id, { action: 'approve', rememberForMs: 900_000 }, asToken)).toMatchObject({ status: 404 });
    // Told "not found", as for a question that does not exist; the log says who tried whose.
    const tried = await eventually(() => auditRows(dataDir, "rule = 'inbox:not-yours'")[0]);
    expect(tried).toMatchObject({ principal: 'alice', auth_method: 'jwt', decision: 'denied', method: 'http', name: `POST /admin/inbox/items/${keyItem.id}/answer` });
    expect(tried.error_message).toMatch(/question of alice's/);
    expect(await answerItem(daemon, keyItem.id, { action: 'approve', rememberForMs: 900_000 }, asKey)).toMatchObject({ status: 204 });
    expect(await keyCall).toContain('from the key');

    // The same call by the token is asked again, as the token's own question.
    const token = await connect(await aliceToken(), 'token-alice-approvals');
    const tokenCall = token.callTool({ name: 'shared__echo', arguments: { text: 'from the key' } }).then(textOf);
    const tokenItem = await pendingItem(daemon, (i) => i.principal === 'jwt:alice', asToken);
    expect(await inboxItems(daemon, asKey)).toEqual([]);
    expect(await answerItem(daemon, tokenItem.id, { action: 'decline' }, asToken)).toMatchObject({ status: 204 });
    await expect(tokenCall).rejects.toMatchObject({ code: -32014, message: expect.stringContaining('declined by jwt:alice') });

    const approvals = await eventually(() => {
      const rows = auditRows(dataDir, "method = 'switchboard/approval'");
      return rows.length >= 2 ? rows : undefined;
    });
    expect(approvals.map((r) => [r.principal, r.auth_method, r.rule])).toEqual([
      ['alice', 'api-key', 'approval:inbox'],
      ['alice', 'jwt', 'approval:declined'],
    ]);
  });
});
