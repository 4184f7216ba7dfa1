import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, type AuditRowRecord } from './support/audit-rows.js';
import { cliRunsTimeout, createKey, runCli } from './support/cli.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { INITIALIZE, MCP_ACCEPT } from './support/mcp-http.js';
import { startHttpFixture } from '@switchboard/testing';

/**
 * Who and what an auditor finds refusals under (docs/audit.md): a request made with a key
 * that was revoked or has expired is the key's, not anonymous, so filtering by the key's
 * caller name finds it; a call the policy denied names the upstream and the upstream's own
 * name of the tool it asked for, so filtering by either finds it; so do a prompts/get,
 * resources/read and completion/complete it denied. None of it changes what the caller is
 * answered.
 */

afterAll(stopAllDaemons);

const POLICY = `
defaultEffect: deny
roles:
  dev:
    - { id: add-ok, allow: call, tool: fx__add }
  reader:
    - { id: read-all, allow: read, resource: "**" }
`;

describe('attribution of refusals in the audit log (auth.mode: required, a policy)', () => {
  let daemon: DaemonHandle;
  let configPath: string;
  let dataDir: string;
  const keys: Record<string, string> = {};

  const cli = (...args: string[]) => runCli([...args, '--config', configPath]);
  const exported = (...filters: string[]): AuditRowRecord[] => {
    const run = cli('audit', 'export', '--format', 'jsonl', ...filters);
    expect(run.code, run.stderr).toBe(0);
    return run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as AuditRowRecord);
  };
  const stats = (...filters: string[]) => {
    const run = cli('audit', 'stats', '--json', ...filters);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as {
      byDecision: Record<string, number>;
      byTool: { tool: string; upstream: string | null; calls: number; denials: number }[];
      byMethod: { method: string; rows: number; errors: number; denials: number }[];
    };
  };
  const apiItems = async (query: Record<string, string>): Promise<AuditRowRecord[]> => {
    const res = await request(daemon.baseUrl).get('/admin/api/audit').query(query).set('X-API-Key', keys.auditor).expect(200);
    return (res.body as { items: AuditRowRecord[] }).items;
  };

  async function host(key: string): Promise<Client> {
    const client = new Client({ name: 'e2e-attribution', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    return client;
  }

  beforeAll(async () => {
    const dir = tempDir('sb-attribution-');
    dataDir = join(dir, 'data');
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    configPath = writeConfig({ auth: { mode: 'required' }, policy: { file: 'policy.yaml' }, mcpServers: { fx: stdioFixture() } }, dir);
    for (const [name, roles] of [['auditor', 'admin'], ['frank', 'dev'], ['gina', 'dev'], ['hana', 'dev'], ['ivy', 'reader']] as const) keys[name] = createKey(configPath, name, roles);
    daemon = await startDaemon(configPath);
  });

  it(
    "a revoked key's refusals (/mcp, /admin, the inbox sign-in) are the key's rows, found by its caller name, as its session's end is; an unknown key's stay anonymous",
    async () => {
      // A session opened before the revoke: the credential check ends it with a row of its own.
      const open = await host(keys.frank);
      expect(cli('keys', 'revoke', 'frank').code).toBe(0);
      const refused = [
        await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', keys.frank).send(INITIALIZE).expect(401),
        await request(daemon.baseUrl).get('/admin/api/audit').set('Authorization', `Bearer ${keys.frank}`).expect(401),
        await request(daemon.baseUrl).post('/admin/inbox/login').send({ token: keys.frank }).expect(401),
      ];
      // What the holder of the key is told is as before: revoked, never whose.
      for (const res of refused) {
        expect(JSON.stringify(res.body)).toMatch(/the API key was revoked/);
        expect(JSON.stringify(res.body) + String(res.headers['www-authenticate'])).not.toContain('frank');
      }
      await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', `sbk_${'Q'.repeat(43)}`).send(INITIALIZE).expect(401);

      const rows = await eventually(() => {
        const found = auditRows(dataDir, `rule IN ('auth:revoked-key', 'auth:unknown-key')`);
        return found.length >= 5 ? found : undefined;
      }, 15_000, 'the four refusals and the ended session');
      await open.close();
      const http = rows.filter((row) => row.rule === 'auth:revoked-key' && row.method === 'http');
      expect(http.map((row) => row.name).sort()).toEqual(['GET /admin/api/audit', 'POST /admin/inbox/login', 'POST /mcp']);
      for (const row of http) {
        expect(row).toMatchObject({ principal: 'frank', auth_method: 'api-key', decision: 'unauthenticated', error_message: "API key 'frank' was revoked" });
      }
      expect(rows.find((row) => row.method === 'session')).toMatchObject({ principal: 'frank', auth_method: 'api-key', name: 'ended', rule: 'auth:revoked-key' });
      expect(rows.find((row) => row.rule === 'auth:unknown-key')).toMatchObject({ principal: 'anonymous', auth_method: 'none', name: 'POST /mcp' });

      // Every reader finds all four of frank's refusals by the key's caller name.
      const frankRevoked = (found: AuditRowRecord[]) => found.filter((row) => row.rule === 'auth:revoked-key').length;
      expect(frankRevoked(exported('--principal', 'key:frank'))).toBe(4);
      expect(frankRevoked(await apiItems({ principal: 'key:frank' }))).toBe(4);
      expect(stats('--principal', 'key:frank', '--decision', 'unauthenticated').byDecision.unauthenticated).toBe(4);
    },
    cliRunsTimeout(6),
  );

  it("an expired key's refusal is the key's row too", async () => {
    const made = cli('keys', 'create', '--name', 'erin', '--roles', 'dev', '--expires', '1s');
    expect(made.code, made.stderr).toBe(0);
    const erin = made.stdout.trimEnd().split('\n').at(-1)!;
    // Waits for the key to lapse rather than for the clock (an initialize before that opens a session, ended later).
    const res = await eventually(async () => {
      const answer = await request(daemon.baseUrl).post('/mcp').set('Accept', MCP_ACCEPT).set('X-API-Key', erin).send(INITIALIZE);
      return answer.status === 401 ? answer : undefined;
    }, 15_000, 'the key to expire');
    expect(res.body.error.message).toMatch(/the API key expired/);
    const [row] = await eventually(() => {
      const found = auditRows(dataDir, `rule = 'auth:expired-key' AND method = 'http'`);
      return found.length > 0 ? found : undefined;
    });
    expect(row).toMatchObject({ principal: 'erin', auth_method: 'api-key', name: 'POST /mcp', error_message: "API key 'erin' expired" });
    expect(exported('--principal', 'key:erin', '--method', 'http')).toHaveLength(1);
  });

  it(
    'a tools/call the policy denied answers as an unknown tool, and its row names the upstream and original name; an unknown name has neither',
    async () => {
      const gina = await host(keys.gina);
      const failure = (name: string) =>
        gina.callTool({ name, arguments: { text: 'hi' } }).then(
          () => expect.unreachable(`${name} was answered`),
          (err: unknown) => (expect(err).toBeInstanceOf(ProtocolError), { code: (err as ProtocolError).code, message: (err as ProtocolError).message }),
        );
      const denied = await failure('fx__echo');
      const unknown = await failure('fx__nothing_here');
      expect(denied).toEqual({ code: unknown.code, message: unknown.message.replace('fx__nothing_here', 'fx__echo') });
      await gina.close();

      const [deniedRow] = await eventually(() => {
        const found = auditRows(dataDir, `principal = 'gina' AND name = 'fx__nothing_here'`);
        return found.length > 0 ? auditRows(dataDir, `principal = 'gina' AND name = 'fx__echo'`) : undefined;
      });
      expect(deniedRow).toMatchObject({ decision: 'denied', rule: 'policy:default-deny', upstream: 'fx', original_name: 'echo', outcome: null });
      const [unknownRow] = auditRows(dataDir, `principal = 'gina' AND name = 'fx__nothing_here'`);
      expect(unknownRow).toMatchObject({ decision: 'denied', rule: 'catalog:unknown-tool', upstream: null, original_name: null });

      // Found by the upstream's own name and by the upstream, on the command line and the API.
      const isDenial = (row: AuditRowRecord) => row.principal === 'gina' && row.decision === 'denied';
      expect(exported('--tool', 'echo').filter(isDenial)).toHaveLength(1);
      expect((await apiItems({ tool: 'echo' })).filter(isDenial)).toHaveLength(1);
      expect((await apiItems({ upstream: 'fx', principal: 'gina' })).map((row) => row.name)).toEqual(['fx__echo']);
      expect(stats('--principal', 'gina', '--upstream', 'fx').byTool).toEqual([{ tool: 'fx__echo', upstream: 'fx', calls: 1, errors: 0, denials: 1 }]);
    },
    cliRunsTimeout(3),
  );

  it(
    'a prompts/get, resources/read and completion/complete the policy denied answer as absent names, and their rows name the upstream and original name',
    async () => {
      const [hana, ivy] = [await host(keys.hana), await host(keys.ivy)];
      // One at a time, so that the rows come in this order.
      const failure = (ask: () => Promise<unknown>) =>
        ask().then(
          () => expect.unreachable('answered'),
          (err: unknown) => (expect(err).toBeInstanceOf(ProtocolError), { code: (err as ProtocolError).code, message: (err as ProtocolError).message }),
        );
      const prompt = (client: Client, name: string) => client.getPrompt({ name, arguments: { name: 'Ada' } });
      const completePrompt = (client: Client, name: string) => client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: 'style', value: 'f' } });
      // Each denial beside the answer to a name that does not exist: the same but for the name.
      // (With one upstream, every URI routes to it: a URI that is not there is the answer of a
      // reader the policy lets through, which the upstream tells it has no such resource.)
      for (const [denied, absent, [name, other]] of [
        [() => prompt(hana, 'fx__greet'), () => prompt(hana, 'fx__nope'), ['fx__greet', 'fx__nope']],
        [() => hana.readResource({ uri: 'fixture://static/hello' }), () => ivy.readResource({ uri: 'fixture://static/nope' }), ['fixture://static/hello', 'fixture://static/nope']],
        [() => completePrompt(hana, 'fx__greet'), () => completePrompt(hana, 'fx__nope'), ['fx__greet', 'fx__nope']],
      ] as const) {
        const [answer, unknown] = [await failure(denied), await failure(absent)];
        expect(answer, name).toEqual({ code: unknown.code, message: unknown.message.replace(other, name) });
      }
      const template = await failure(() => hana.complete({ ref: { type: 'ref/resource', uri: 'fixture://items/{id}' }, argument: { name: 'id', value: '' } }));
      expect(template).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown resource: fixture://items/{id}') });
      await Promise.all([hana.close(), ivy.close()]);

      const rows = await eventually(() => {
        const found = auditRows(dataDir, `principal = 'hana' AND method != 'session'`);
        return found.length >= 6 ? found : undefined;
      });
      const denials = rows.filter((row) => row.rule === 'policy:default-deny').map((row) => [row.method, row.name, row.upstream, row.original_name, row.decision, row.outcome]);
      expect(denials).toEqual([
        ['prompts/get', 'fx__greet', 'fx', 'greet', 'denied', null],
        ['resources/read', 'fixture://static/hello', 'fx', 'fixture://static/hello', 'denied', null],
        ['completion/complete', 'fx__greet', 'fx', 'greet', 'denied', null],
        ['completion/complete', 'fixture://items/{id}', 'fx', 'fixture://items/{id}', 'denied', null],
      ]);
      // A name that does not exist still has neither.
      const unknownRows = rows.filter((row) => row.rule !== 'policy:default-deny').map((row) => [row.method, row.name, row.rule, row.upstream, row.original_name]);
      expect(unknownRows).toEqual([
        ['prompts/get', 'fx__nope', 'catalog:unknown-prompt', null, null],
        ['completion/complete', 'fx__nope', 'catalog:unknown-ref', null, null],
      ]);

      // Found by the upstream on the command line, the API and in the stats per method; --tool is for tool calls only.
      expect(exported('--principal', 'key:hana', '--upstream', 'fx')).toHaveLength(4);
      expect(await apiItems({ principal: 'key:hana', upstream: 'fx' })).toHaveLength(4);
      expect(stats('--principal', 'key:hana', '--upstream', 'fx').byMethod).toEqual([
        { method: 'completion/complete', rows: 2, errors: 0, denials: 2 },
        { method: 'prompts/get', rows: 1, errors: 0, denials: 1 },
        { method: 'resources/read', rows: 1, errors: 0, denials: 1 },
      ]);
      expect(exported('--principal', 'key:hana', '--tool', 'greet')).toEqual([]);
    },
    cliRunsTimeout(4),
  );
});

describe('a denied name of an upstream that is down', () => {
  it('is answered as unknown, and its row still names the upstream and its own name', async () => {
    const fixture = await startHttpFixture('http');
    const dir = tempDir('sb-attribution-down-');
    writeFileSync(join(dir, 'policy.yaml'), 'everyone: [dev]\nroles:\n  dev:\n    - { id: no-echo, deny: call, tool: fx__echo }\n    - { id: no-greet, deny: get, prompt: fx__greet }\n');
    const config = writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: { fx: { type: 'http', url: fixture.url } } }, dir);
    const down = await startDaemon(config);
    const client = new Client({ name: 'e2e-attribution', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(down.mcpUrl)));
    try {
      await fixture.stop();
      await eventually(async () => (await request(down.baseUrl).get('/readyz')).status === 503, 60_000, 'the upstream to be seen down');
      const refused = [
        await client.callTool({ name: 'fx__echo', arguments: { text: 'x' } }).then(() => undefined, (err: unknown) => err),
        await client.getPrompt({ name: 'fx__greet', arguments: { name: 'x' } }).then(() => undefined, (err: unknown) => err),
      ];
      expect(refused.map((err) => (err as ProtocolError).message)).toEqual([
        expect.stringContaining('Unknown tool: fx__echo'),
        expect.stringMatching(/Unknown prompt:? .*fx__greet/),
      ]);
      const rows = auditRows(join(dir, 'data'), `rule IN ('no-echo', 'no-greet')`).map((row) => [row.method, row.name, row.upstream, row.original_name, row.decision]);
      expect(rows).toEqual([
        ['tools/call', 'fx__echo', 'fx', 'echo', 'denied'],
        ['prompts/get', 'fx__greet', 'fx', 'greet', 'denied'],
      ]);
    } finally {
      await client.close();
    }
  });
});
