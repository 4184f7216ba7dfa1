import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { startApiKeyDaemon } from './support/api-key-daemon.js';
import { cliRunsTimeout, createKey, runCli } from './support/cli.js';
import { eventually, stopAllDaemons, type DaemonHandle } from './support/daemon.js';
import { INITIALIZE, MCP_ACCEPT } from './support/mcp-http.js';

/**
 * `switchboard keys rotate`: a shared endpoint's key replaced without downtime. The new key
 * serves at once; the old one keeps serving for the overlap, then is refused as expired and
 * the sessions it opened end; a name still has one key outside a rotation.
 */

afterAll(stopAllDaemons);

const ISO = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`;

interface ListedKey {
  id: number;
  name: string;
  status: string;
  roles: string[];
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  replacedBy: number | null;
}

describe('switchboard keys rotate', () => {
  let daemon: DaemonHandle;
  let configPath: string;
  let dataDir: string;
  const clients: Client[] = [];

  const cli = (...args: string[]) => runCli([...args, '--config', configPath]);
  const rotate = (...args: string[]) => cli('keys', 'rotate', ...args);
  /** The new key: the last line of stdout, as `keys create` prints it. */
  const rotated = (...args: string[]): string => {
    const run = rotate(...args);
    expect(run.code, run.stderr).toBe(0);
    return run.stdout.trimEnd().split('\n').at(-1)!;
  };
  const listed = (): ListedKey[] => JSON.parse(cli('keys', 'list', '--json').stdout) as ListedKey[];
  const connect = async (key: string): Promise<{ client: Client; session: string }> => {
    const client = new Client({ name: 'e2e-rotate', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { 'X-API-Key': key } } });
    await client.connect(transport);
    clients.push(client);
    return { client, session: transport.sessionId! };
  };
  const echo = async (client: Client, text: string) => {
    const result = await client.callTool({ name: 'fx__echo', arguments: { text } });
    return JSON.stringify(result.content);
  };
  const initialize = (key: string) => request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', key).send(INITIALIZE);

  beforeAll(async () => {
    ({ daemon, configPath, dataDir } = await startApiKeyDaemon());
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
  });

  it('during the overlap both keys call tools, under one principal; a plain create of the name is still refused', { timeout: cliRunsTimeout(4) }, async () => {
    const oldKey = createKey(configPath, 'frank', 'dev,ops');
    const before = await connect(oldKey);
    const run = rotate('frank');
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^rotated key 'frank': new key id 2 \\(roles: dev, ops; expires: never\\); the old key \\(id 1\\) works until ${ISO}, then is refused as expired$`));
    expect(lines.at(-2)).toMatch(/^It is shown only now; store it as a secret\./);
    const newKey = lines.at(-1)!;
    expect(newKey).toMatch(/^sbk_[A-Za-z0-9_-]{43}$/);

    const after = await connect(newKey);
    expect(await echo(before.client, 'old key')).toContain('old key');
    expect(await echo(after.client, 'new key')).toContain('new key');
    // A fresh session with the old key too: it is not merely the open one that holds.
    expect((await initialize(oldKey)).status).toBe(200);
    const rows = auditRows(dataDir, `name = 'fx__echo' AND session_id IN (?, ?)`, before.session, after.session);
    expect(rows.map((row) => [row.principal, row.decision])).toEqual([['frank', 'allowed'], ['frank', 'allowed']]);

    const refused = cli('keys', 'create', '--name', 'frank');
    expect(refused).toMatchObject({ code: 1, stderr: "switchboard: a key named 'frank' already exists (revoke it first, or pick another name)\n" });
  });

  it('after the overlap the old key is refused as expired and its open session ends; the new key serves', { timeout: cliRunsTimeout(3) + 60_000 }, async () => {
    const oldKey = createKey(configPath, 'gina', 'dev');
    const { session } = await connect(oldKey);
    const newKey = rotated('gina', '--overlap', '2s');
    const refusal = await eventually(async () => {
      const answer = await initialize(oldKey);
      return answer.status === 401 ? answer : undefined;
    }, 30_000, 'the overlap to end');
    expect(refusal.body.error.message).toMatch(/the API key expired/);
    const [ended] = await eventually(() => {
      const found = auditRows(dataDir, `name = 'ended' AND session_id = ?`, session);
      return found.length > 0 ? found : undefined;
    }, 30_000, 'the old key\'s session to end');
    expect(ended).toMatchObject({ method: 'session', principal: 'gina', rule: 'auth:expired-key' });
    const { client } = await connect(newKey);
    expect(await echo(client, 'still here')).toContain('still here');
    const [old, current] = listed().filter((k) => k.name === 'gina').reverse();
    expect(old).toMatchObject({ status: 'expired', replacedBy: current.id });
    expect(current).toMatchObject({ status: 'active', replacedBy: null, roles: ['dev'] });
  });

  it('--overlap 0 ends the old key at once; a key that expires gets a new one of the same lifetime', { timeout: cliRunsTimeout(4) }, async () => {
    const made = cli('keys', 'create', '--name', 'hal', '--expires', '30d');
    expect(made.code, made.stderr).toBe(0);
    const oldKey = made.stdout.trimEnd().split('\n').at(-1)!;
    const [made30d] = listed().filter((k) => k.name === 'hal');
    const run = rotate('hal', '--overlap', '0');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^rotated key 'hal': new key id \\d+ \\(roles: none; expires: ${ISO}\\); the old key \\(id \\d+\\) is refused as expired from now on\n`));
    const res = await initialize(oldKey);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/the API key expired/);
    expect((await initialize(run.stdout.trimEnd().split('\n').at(-1)!)).status).toBe(200);
    const [current, old] = listed().filter((k) => k.name === 'hal');
    expect(current.expiresAt! - current.createdAt).toBe(made30d.expiresAt! - made30d.createdAt);
    expect(old).toMatchObject({ status: 'expired', replacedBy: current.id });
  });

  it('keys list shows the rotated key until when, --json its replacement; keys revoke NAME revokes every key of the name', { timeout: cliRunsTimeout(6) }, async () => {
    const oldKey = createKey(configPath, 'ivy', 'dev');
    const newKey = rotated('ivy', '--overlap', '1h');
    const [current, old] = listed().filter((k) => k.name === 'ivy');
    expect(old).toMatchObject({ status: 'rotated', replacedBy: current.id, revokedAt: null });
    expect(old.expiresAt! - Date.now()).toBeGreaterThan(50 * 60_000);
    expect(current).toMatchObject({ status: 'active', replacedBy: null });
    const table = cli('keys', 'list').stdout.split('\n').find((line) => new RegExp(`^\\s*${old.id}\\s+ivy\\s`).test(line));
    expect(table).toMatch(new RegExp(`\\srotated \\(by id ${current.id}\\)\\s`));

    const revoked = cli('keys', 'revoke', 'ivy');
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^revoked 2 keys named 'ivy' \\(ids ${current.id}, ${old.id}\\); they stop working on the next request`));
    expect((await initialize(oldKey)).status).toBe(401);
    expect((await initialize(newKey)).status).toBe(401);
    expect(listed().filter((k) => k.name === 'ivy').map((k) => k.status)).toEqual(['revoked', 'revoked']);
  });

  it('refuses an unknown name or id, a revoked key, a key already rotated, and a bad --overlap', { timeout: cliRunsTimeout(8) }, () => {
    createKey(configPath, 'jo');
    const [jo] = listed().filter((k) => k.name === 'jo');
    expect(rotate('nobody')).toMatchObject({ code: 1, stderr: "switchboard: no active key named 'nobody'\n" });
    expect(rotate('999')).toMatchObject({ code: 1, stderr: 'switchboard: no key with id 999\n' });
    expect(rotate('jo', '--overlap', 'soon')).toMatchObject({ code: 2, stderr: expect.stringMatching(/^switchboard: --overlap 'soon': must be a count and a unit \(s, m, h, d, w\) like '1h'/) });
    rotated('jo');
    expect(rotate(String(jo.id))).toMatchObject({ code: 1, stderr: `switchboard: key 'jo' (id ${jo.id}) was already rotated: its replacement is id ${jo.id + 1}; rotate that one\n` });
    // Its replacement revoked alone, the rotated key is the name's one key serving: not one to rotate.
    expect(cli('keys', 'revoke', String(jo.id + 1)).code).toBe(0);
    expect(rotate('jo')).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(new RegExp(`^switchboard: key 'jo' \\(id ${jo.id}\\) was rotated and serves until ${ISO}, but its replacement \\(id ${jo.id + 1}\\) was revoked; revoke it, then keys create a new one\n$`)),
    });
    expect(rotate(String(jo.id + 1))).toMatchObject({ code: 1, stderr: expect.stringMatching(new RegExp(`^switchboard: key 'jo' \\(id ${jo.id + 1}\\) was revoked at ${ISO}; nothing to rotate\n$`)) });
  });
});
