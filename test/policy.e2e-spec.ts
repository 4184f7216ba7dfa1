import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { MAX_URI_CHARS } from '@switchboard/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING_SERVER, eventually, REPO_ROOT, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { cliRunsTimeout, createKey, runCli } from './support/cli.js';
import { auditRows } from './support/audit-rows.js';



async function failure(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await call.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ProtocolError);
  const { code, message } = error as ProtocolError;
  return { code, message };
}

const POLICY = `
defaultEffect: deny
roles:
  dev:
    - { id: echo-ok, allow: call, tool: fx__echo, when: { args.text: { startsWith: "ok" } } }
    - { id: add, allow: call, tool: fx__add }
  ops:
    - { id: all-fx, allow: "*", server: fx }
    - { id: no-crash, deny: call, tool: fx__crash }
    - { id: demo-all, allow: "*", server: demo }
users:
  bob: [dev]
`;

afterAll(stopAllDaemons);

describe('policies through the daemon (CASL, from a policy file)', () => {
  let daemon: DaemonHandle;
  let dir: string;
  let policyFile: string;
  let configPath: string;
  const keys: Record<string, string> = {};

  async function host(name: string): Promise<Client> {
    const client = new Client({ name: `e2e-policy-${name}`, version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${keys[name]}` } } }),
    );
    return client;
  }
  const toolNames = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();

  beforeAll(async () => {
    dir = tempDir();
    policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, POLICY);
    const demo = { command: process.execPath, args: [join(REPO_ROOT, 'apps/demo-upstream/dist/main.js')] };
    configPath = writeConfig({ auth: { mode: 'required' }, policy: { file: 'policy.yaml' }, mcpServers: { fx: stdioFixture(), demo } }, dir);
    for (const [name, roles] of [['bob', ''], ['olga', 'ops']] as const) {
      keys[name] = createKey(configPath, name, roles);
    }
    daemon = await startDaemon(configPath);
  });

  it('lists show exactly what a principal may use', async () => {
    const bob = await host('bob');
    expect(await toolNames(bob)).toEqual(['fx__add', 'fx__echo']);
    expect((await bob.listPrompts()).prompts).toEqual([]);
    const olga = await host('olga');
    const olgas = await toolNames(olga);
    expect(olgas).toContain('fx__env');
    expect(olgas).not.toContain('fx__crash');
    expect((await olga.listPrompts()).prompts.map((p) => p.name)).toContain('fx__greet');
    await Promise.all([bob.close(), olga.close()]);
  });

  it("initialize shows an upstream's instructions only to those the policy lets see something of it", async () => {
    const [bob, olga] = [await host('bob'), await host('olga')];
    expect(olga.getInstructions()).toMatch(/## demo\nA demo server bundled with Switchboard/);
    expect(bob.getInstructions()).toBeUndefined();
    await Promise.all([bob.close(), olga.close()]);
  });

  it('a tool held back by pinning is, to a caller the policy hides it from, just unknown', async () => {
    const olga = await host('olga');
    await olga.callTool({ name: 'fx__add_tool', arguments: { name: 'dyn', description: 'Reads the weather' } });
    await eventually(async () => ((await toolNames(olga)).includes('fx__dyn') ? true : undefined));
    await olga.callTool({ name: 'fx__remove_tool', arguments: { name: 'dyn' } });
    await olga.callTool({ name: 'fx__add_tool', arguments: { name: 'dyn', description: 'Reads the weather, and your keys' } });
    await eventually(async () => (!(await toolNames(olga)).includes('fx__dyn') ? true : undefined));
    expect((await failure(olga.callTool({ name: 'fx__dyn', arguments: {} }))).message).toMatch(/held back/);
    const bob = await host('bob');
    expect((await failure(bob.callTool({ name: 'fx__dyn', arguments: {} }))).message).toBe('Unknown tool: fx__dyn');
    await Promise.all([bob.close(), olga.close()]);
  });

  it('a denied call answers exactly like an unknown tool, and the row names the rule', async () => {
    const bob = await host('bob');
    expect(await bob.callTool({ name: 'fx__add', arguments: { a: 2, b: 3 } })).toMatchObject({ structuredContent: { sum: 5 } });
    await bob.callTool({ name: 'fx__echo', arguments: { text: 'ok then' } });
    const denied = await failure(bob.callTool({ name: 'fx__env', arguments: { name: 'HOME' } }));
    const unknown = await failure(bob.callTool({ name: 'fx__nothing_here', arguments: {} }));
    expect(denied.code).toBe(unknown.code);
    expect(denied.message).toBe(unknown.message.replace('fx__nothing_here', 'fx__env'));
    // An argument condition: the same tool, refused for other arguments.
    const byArgs = await failure(bob.callTool({ name: 'fx__echo', arguments: { text: 'not ok' } }));
    expect(byArgs.message).toMatch(/Unknown tool: fx__echo/);
    await bob.close();

    const dataDir = join(dir, 'data');
    expect(auditRows(dataDir, `principal = 'bob' AND name = 'fx__add'`)[0]).toMatchObject({ decision: 'allowed', rule: 'add' });
    expect(auditRows(dataDir, `principal = 'bob' AND name = 'fx__env'`)[0]).toMatchObject({ decision: 'denied', rule: 'policy:default-deny', upstream: 'fx', original_name: 'env' });
    expect(auditRows(dataDir, `principal = 'bob' AND arguments LIKE '%not ok%'`)[0]).toMatchObject({ decision: 'denied', rule: 'policy:default-deny' });
  });

  it('a deny rule beats an allow, for lists and calls alike', async () => {
    const olga = await host('olga');
    expect((await failure(olga.callTool({ name: 'fx__crash', arguments: {} }))).message).toMatch(/Unknown tool: fx__crash/);
    await olga.close();
    expect(auditRows(join(dir, 'data'), `principal = 'olga' AND name = 'fx__crash'`)[0]).toMatchObject({ decision: 'denied', rule: 'no-crash' });
  });

  it('a changed policy file applies to the next request, and hosts hear list_changed; an invalid one is refused and the old one stays', async () => {
    const bob = await host('bob');
    let changed = 0;
    bob.setNotificationHandler('notifications/tools/list_changed', () => void (changed += 1));
    writeFileSync(policyFile, `${POLICY.replace('bob: [dev]', 'bob: [dev, ops]')}`);
    await eventually(() => changed > 0 || undefined, 10_000, 'tools/list_changed after the policy reload');
    await eventually(async () => (await toolNames(bob)).includes('fx__env') || undefined);
    await bob.callTool({ name: 'fx__env', arguments: { name: 'HOME' } });

    writeFileSync(policyFile, 'roles:\n  dev:\n    - { allow: call, deny: call }\nusers: { bob: [nosuchrole] }\n');
    await eventually(() => /policy change refused/.test(daemon.stderr()) || undefined);
    await bob.callTool({ name: 'fx__env', arguments: { name: 'HOME' } });
    await bob.close();
  });

  it("a shared server's log lines reach only the principals the policy lets read them (action log)", async () => {
    writeFileSync(policyFile, POLICY); // bob is back to dev only
    const seen: Record<string, string[]> = { bob: [], olga: [] };
    const clients = { bob: await host('bob'), olga: await host('olga') };
    await eventually(async () => !(await toolNames(clients.bob)).includes('fx__env') || undefined);
    for (const [name, client] of Object.entries(clients)) {
      client.setNotificationHandler('notifications/message', (n) => void seen[name].push(String(n.params.data)));
    }
    // A tool fx adds is announced to every session, bob's too, on the stream a log line for
    // him would take, and after it: once bob hears an announcement sent after olga's line, a
    // line sent to him would be there. Announcements carry no name, so it is told by count.
    // Sent to bob before the line: at most two, the policy reload's and one the list_changed
    // throttle had planned before it (a change made while one is planned goes with it). So
    // once bob has heard three, at least one was sent after the line; tools are added until
    // he has, as the throttle may fold two of them into one announcement.
    let bobListChanges = 0;
    clients.bob.setNotificationHandler('notifications/tools/list_changed', () => void bobListChanges++);
    // olga's ops role has `allow: "*", server: fx`, which includes log; bob's rules only call.
    await clients.olga.callTool({ name: 'fx__log', arguments: { level: 'error', message: 'olga private' } });
    await eventually(async () => seen.olga.includes('olga private'), 5_000, "olga's log line");
    const barriers: string[] = [];
    while (bobListChanges < 3) {
      const tool = `log_barrier_${barriers.length + 1}`;
      barriers.push(tool);
      const heard = bobListChanges;
      await clients.olga.callTool({ name: 'fx__add_tool', arguments: { name: tool } });
      await eventually(() => bobListChanges > heard || undefined, 10_000, `bob told of ${tool}`);
    }
    expect(seen.bob).toEqual([]);
    for (const tool of barriers) await clients.olga.callTool({ name: 'fx__remove_tool', arguments: { name: tool } });
    await Promise.all(Object.values(clients).map((c) => c.close()));
  });

  // 13 runs of the CLI, one after another (cliRunsTimeout says why that needs more time).
  it('policy check prints the decision and the rule (exit 0 allow, 3 deny); lint lists every problem', { timeout: cliRunsTimeout(13) }, () => {
    writeFileSync(policyFile, POLICY);
    const allow = runCli(['policy', 'check', '--config', configPath, '--principal', 'bob', '--tool', 'fx__echo', '--args', '{"text":"ok"}']);
    expect(allow.code).toBe(0);
    expect(allow.stdout).toMatch(/^allow {2}rule: echo-ok\n/);
    const deny = runCli(['policy', 'check', '--config', configPath, '--principal', 'bob', '--tool', 'fx__echo', '--args', '{"text":"no"}']);
    expect(deny.code).toBe(3);
    expect(deny.stdout).toMatch(/^deny {2}rule: policy:default-deny\n/);
    expect(runCli(['policy', 'check', '--config', configPath, '--principal', 'x', '--roles', 'ops', '--tool', 'fx__crash']).stdout).toMatch(/^deny {2}rule: no-crash/);
    // A URI the daemon refuses before any rule sees it (-32602), whatever the rules say.
    for (const uri of ['fixture://items/../static/hello', 'switchboard://fy/fixture://items/%2e%2e/x', 'file:////etc/passwd']) {
      const odd = runCli(['policy', 'check', '--config', configPath, '--principal', 'x', '--roles', 'ops', '--resource', uri, '--server', 'fx']);
      expect([odd.code, odd.stdout]).toEqual([3, expect.stringMatching(/^deny {2}rule: request:unnormalized-uri \(the daemon refuses the URI: must not contain/)]);
    }
    // Longer than a host may send: refused before it is routed, so before the unnormalized check too.
    for (const uri of [`fixture://static/${'x'.repeat(MAX_URI_CHARS)}`, `switchboard://fy/fixture://items/../${'x'.repeat(MAX_URI_CHARS)}`]) {
      const long = runCli(['policy', 'check', '--config', configPath, '--principal', 'x', '--roles', 'ops', '--resource', uri, '--server', 'fx']);
      expect([long.code, long.stdout]).toEqual([
        3,
        expect.stringMatching(new RegExp(`^deny {2}rule: request:uri-too-long \\(the daemon refuses the URI: 'uri' is ${uri.length} characters; the limit is ${MAX_URI_CHARS}\\)\n`)),
      ]);
    }
    // At the limit, the rules decide.
    const atLimit = `fixture://static/${'x'.repeat(MAX_URI_CHARS - 'fixture://static/'.length)}`;
    expect(runCli(['policy', 'check', '--config', configPath, '--principal', 'x', '--roles', 'ops', '--resource', atLimit, '--server', 'fx']).stdout).toMatch(/^allow {2}rule: all-fx/);
    // With an alias, a tool's prefix is the alias; the rule's server: is still the upstream's name.
    const aliased = writeConfig({ policy: { file: policyFile }, mcpServers: { fx: stdioFixture({}, { alias: 'files' }) } });
    expect(runCli(['policy', 'check', '--config', aliased, '--principal', 'x', '--roles', 'ops', '--tool', 'files__env']).stdout).toMatch(/^allow {2}rule: all-fx/);

    expect(runCli(['policy', 'lint', '--config', configPath]).stdout).toMatch(/^ok: .*policy\.yaml: 2 roles, 5 rules\n$/);
    const single = join(dir, 'single-policy.yaml');
    writeFileSync(single, 'roles:\n  dev:\n    - { allow: call, tool: "fx__*" }\n');
    expect(runCli(['policy', 'lint', '--file', single]).stdout).toMatch(/^ok: .*single-policy\.yaml: 1 role, 1 rule\n$/);
    const bad = join(dir, 'bad-policy.yaml');
    writeFileSync(bad, 'roles:\n  dev:\n    - { allow: call, deny: call }\n    - { allow: fly, tool: x }\nusers: { bob: [nosuchrole] }\n');
    const lint = runCli(['policy', 'lint', '--file', bad]);
    expect(lint.code).toBe(1);
    expect(lint.stderr).toMatch(/roles\.dev\.0: a rule has exactly one of allow, deny or confirm/);
    expect(lint.stderr).toMatch(/roles\.dev\.1\.allow: must be one of list, call, .*, or a list of them/);
    // The generic problems read as in a config file, not as the schema library's wording.
    writeFileSync(bad, 'users: { bob: dev }\n');
    const shapes = runCli(['policy', 'lint', '--file', bad]);
    expect(shapes.stderr).toMatch(/- roles: is required\n {2}- users\.bob: must be a list/);
  });

  it('an invalid policy file stops the start before anything is opened, exit 2 as a refused config, listing the problems', () => {
    const badDir = tempDir();
    writeFileSync(join(badDir, 'policy.yaml'), 'roles: { dev: [] }\neveryone: [ghost]\n');
    const config = writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: {} }, badDir);
    const dataDir = join(badDir, 'data');
    for (const command of ['start', 'stdio']) {
      const r = runCli([command, '--config', config, '--data-dir', dataDir]);
      expect(r.code, command).toBe(2);
      expect(r.stderr).toMatch(/invalid policy file .*policy\.yaml:\n {2}- everyone\.0: no role 'ghost' is defined under roles/);
      expect(existsSync(dataDir), 'no database was created or migrated').toBe(false);
    }
  });

  it('policy lint with the config warns of a rule whose server: is only an alias', () => {
    const aliasDir = tempDir();
    writeFileSync(join(aliasDir, 'policy.yaml'), 'roles:\n  dev:\n    - { id: no-prod, deny: call, server: fs }\n');
    const config = writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: { files: { ...stdioFixture(), alias: 'fs' } } }, aliasDir);
    const lint = runCli(['policy', 'lint', '--config', config]);
    expect(lint.code).toBe(0);
    expect(lint.stderr).toMatch(/warning: .*policy\.yaml: roles\.dev\.0\.server: server: 'fs' matches no upstream's name, only the alias of 'files'/);
    // Without a config there is nothing to compare with, and nothing to warn of.
    expect(runCli(['policy', 'lint', '--file', join(aliasDir, 'policy.yaml')]).stderr).toBe('');
  });

  it('lint, config check and the start warn of a server: that no configured upstream has, naming the one meant', async () => {
    const typoDir = tempDir();
    const file = join(typoDir, 'policy.yaml');
    writeFileSync(file, 'defaultEffect: deny\nroles:\n  dev:\n    - { id: no-shell, deny: call, server: teem }\n');
    const config = writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: { team: stdioFixture() } }, typoDir);
    const reason = "server: 'teem' matches no upstream under mcpServers, so the rule never applies (did you mean `team`?)";
    const lint = runCli(['policy', 'lint', '--config', config]);
    expect(lint.code).toBe(0);
    expect(lint.stderr).toBe(`warning: ${file}: roles.dev.0.server: ${reason}\n`);
    expect(runCli(['config', 'check', '--config', config]).stderr).toContain(`roles.dev.0.server: ${reason}`);
    expect(runCli(['policy', 'lint', '--file', file]).stderr, 'without a config there is nothing to compare with').toBe('');
    const started = await startDaemon(config);
    const logged = JSON.parse(await started.waitForLog(/matches no upstream under mcpServers/, 10_000, "start's warning")) as { msg: string; path: string };
    expect(logged).toMatchObject({ msg: reason, path: 'roles.dev.0.server' });
    await started.stop();
  });

  it('lint, config check and the start warn of a tool: no public name fits: whitespace, a prefix the server: rules out, the upstream\'s own name', async () => {
    const toolDir = tempDir();
    const file = join(toolDir, 'policy.yaml');
    writeFileSync(
      file,
      [
        'defaultEffect: deny',
        'roles:',
        '  dev:',
        '    - { id: no-shell, deny: call, tool: "team__shell " }',
        '    - { id: wrong-server, allow: call, tool: "demo__*", server: team }',
        '    - { id: own-name, allow: call, server: team, tool: read_file }',
        '    - { id: fine, allow: call, server: team, tool: "team__*" }',
        '',
      ].join('\n'),
    );
    const config = writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: { team: stdioFixture(), demo: stdioFixture() } }, toolDir);
    const reasons = {
      'roles.dev.0.tool': "tool: 'team__shell ' has whitespace, which no public tool name has (the gateway publishes such a character as _), so the rule never applies (did you mean `team__shell`?)",
      'roles.dev.1.tool': "tool: 'demo__*' matches no tool of team, which server: 'team' selects: with namespace: prefix its tools are all team__<name>, so the rule never applies (demo__ is the prefix of demo's tools)",
      'roles.dev.2.tool': "tool: 'read_file' has no namespace separator '__', but with namespace: prefix every tool of team, which server: 'team' selects, is team__<name>, so the rule never applies (did you mean `team__read_file`?)",
    };
    const lint = runCli(['policy', 'lint', '--config', config]);
    expect(lint.code).toBe(0);
    expect(lint.stderr).toBe(Object.entries(reasons).map(([path, reason]) => `warning: ${file}: ${path}: ${reason}\n`).join(''));
    expect(runCli(['config', 'check', '--config', config]).stderr).toContain(`roles.dev.2.tool: ${reasons['roles.dev.2.tool']}`);
    // Without a config only the whitespace can be judged: the prefixes are the config's.
    expect(runCli(['policy', 'lint', '--file', file]).stderr).toBe(`warning: ${file}: roles.dev.0.tool: ${reasons['roles.dev.0.tool']}\n`);
    const started = await startDaemon(config);
    for (const [path, reason] of Object.entries(reasons)) {
      const logged = JSON.parse(await started.waitForLog(new RegExp(`"path":"${path.replaceAll('.', '\\.')}"`), 10_000, `start's warning at ${path}`)) as { msg: string };
      expect(logged.msg).toBe(reason);
    }
    await started.stop();
  });

  it('lint, config check and the start warn of a users: entry no caller can have, suggesting the token user it meant', async () => {
    const usersDir = tempDir();
    const file = join(usersDir, 'policy.yaml');
    // alice@corp.example.com is a name a key can have: only the + makes the first one none.
    writeFileSync(file, 'defaultEffect: deny\nroles: { dev: [] }\nusers:\n  alice+ops@corp.example.com: [dev]\n  alice@corp.example.com: [dev]\n');
    const why = "names an API key, and no key can have that name (1-64 ASCII letters (A-Z, a-z), digits, '.', '_', '@' or '-', starting with a letter or digit), so the entry never matches a caller";
    const jwt = { issuer: 'https://issuer.example', audience: 'switchboard', jwksUrl: 'http://127.0.0.1:9/jwks.json' };
    const withJwt = writeConfig({ auth: { mode: 'required', jwt }, policy: { file: 'policy.yaml' }, mcpServers: {} }, usersDir);
    const lint = runCli(['policy', 'lint', '--config', withJwt]);
    expect(lint.code).toBe(0);
    expect(lint.stderr).toBe(`warning: ${file}: users["alice+ops@corp.example.com"]: ${why} (did you mean \`jwt:alice+ops@corp.example.com\`?)\n`);
    expect(runCli(['config', 'check', '--config', withJwt]).stderr).toContain(`users["alice+ops@corp.example.com"]: ${why} (did you mean`);
    expect(runCli(['policy', 'lint', '--file', file]).stderr).toBe(`warning: ${file}: users["alice+ops@corp.example.com"]: ${why}; a token user is jwt:NAME (docs/auth.md, Callers by name)\n`);
    const started = await startDaemon(writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: {} }, usersDir));
    const logged = JSON.parse(await started.waitForLog(/no key can have that name/, 10_000, "start's warning")) as { msg: string; path: string };
    expect(logged).toMatchObject({ msg: why, path: 'users["alice+ops@corp.example.com"]' });
    await started.stop();
  });

  it('policy check tells --args that are no JSON from JSON that is no object, and names the action a typo meant', { timeout: cliRunsTimeout(3) }, () => {
    const check = (...extra: string[]) => runCli(['policy', 'check', '--config', configPath, '--principal', 'bob', '--tool', 'fx__echo', ...extra]);
    const broken = check('--args', '{bad');
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/--args is not valid JSON: .*position 1/);
    const list = check('--args', '["ok"]');
    expect(list.code).toBe(2);
    expect(list.stderr).toMatch(/--args must be a JSON object/);
    const typo = check('--action', 'cal');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/--action must be one of list, call, .*log \(did you mean call\?\)/);
  });

  it('a rule none of whose actions apply to what it selects is refused; one with some that do loads, and start and lint warn of the rest', async () => {
    const dir = tempDir();
    const file = join(dir, 'policy.yaml');
    const config = writeConfig({ policy: { file: 'policy.yaml', defaultEffect: 'deny' }, mcpServers: {} }, dir);
    writeFileSync(file, 'roles:\n  dev:\n    - { id: echo, allow: call, resource: demo__echo }\n');
    const refused = runCli(['policy', 'lint', '--config', config]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/roles\.dev\.0: call does not apply to resources and templates, which resource: selects .*so the rule would never apply; call applies to tools: select them with tool:/);
    writeFileSync(file, 'roles:\n  dev:\n    - { id: echo, allow: [list, call], resource: demo__echo }\n');
    const warned = runCli(['policy', 'lint', '--config', config]);
    expect(warned.code).toBe(0);
    const reason = 'call does not apply to resources and templates, which resource: selects (they take list, read, subscribe and complete), so the rule applies to list only; call applies to tools: select them with tool:';
    expect(warned.stderr).toBe(`warning: ${file}: roles.dev.0.allow: ${reason}\n`);
    expect(runCli(['policy', 'lint', '--file', file]).stderr, 'no config needed for this one').toBe(warned.stderr);
    const daemon = await startDaemon(config);
    const logged = JSON.parse(await daemon.waitForLog(/does not apply to resources/, 10_000, "start's warning")) as { msg: string; path: string };
    expect(logged).toMatchObject({ msg: reason, path: 'roles.dev.0.allow' });
    await daemon.stop();
  });
});

describe('resource rules judge the URI the upstream reads, however the host spells it', () => {
  let client: Client;
  let dataDir: string;

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    writeFileSync(
      join(dir, 'policy.yaml'),
      'defaultEffect: allow\neveryone: [reader]\nroles:\n  reader:\n    - { id: no-static, deny: [read, subscribe, list], resource: "fixture://static/**" }\n',
    );
    // Both fixtures list fixture://static/hello: fx keeps it, fy's is shown as a gateway URI.
    const daemon = await startDaemon(
      writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: { fx: stdioFixture(), fy: stdioFixture({ FIXTURE_NAME: 'fy' }) } }, dir),
    );
    client = new Client({ name: 'e2e-policy-resources', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl)));
  });
  afterAll(() => client?.close());

  it('a gateway URI (switchboard://SERVER/...) is judged by the URI it wraps: read, subscribe and lists', async () => {
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    expect(uris.filter((u) => u.includes('fixture://static/'))).toEqual([]);
    // By the message: the code a host sees for a missing resource depends on its SDK and revision.
    const notFound = { message: expect.stringMatching(/^Resource not found: /) };
    expect(await failure(client.readResource({ uri: 'fixture://static/hello' }))).toMatchObject(notFound);
    expect(await failure(client.readResource({ uri: 'switchboard://fy/fixture://static/hello' }))).toMatchObject(notFound);
    expect(await failure(client.subscribeResource({ uri: 'switchboard://fy/fixture://static/hello' }))).toMatchObject(notFound);
  });

  it('a subscription is recorded like a read: the one the policy denies, the one it allows, and one to no resource', async () => {
    await failure(client.subscribeResource({ uri: 'fixture://static/hello' }));
    await client.subscribeResource({ uri: 'fixture://items/7' });
    await failure(client.subscribeResource({ uri: 'fixture://nowhere/1' }));
    // Undoing one decides nothing: no row.
    await client.unsubscribeResource({ uri: 'fixture://items/7' });
    const rows = auditRows(dataDir, `method LIKE 'resources/%subscribe' AND name IN ('fixture://static/hello', 'fixture://items/7', 'fixture://nowhere/1')`);
    expect(rows.map((r) => [r.method, r.name, r.upstream, r.original_name, r.decision, r.rule, r.outcome])).toEqual([
      ['resources/subscribe', 'fixture://static/hello', 'fx', 'fixture://static/hello', 'denied', 'no-static', null],
      ['resources/subscribe', 'fixture://items/7', 'fx', 'fixture://items/7', 'allowed', 'policy:default-allow', 'ok'],
      ['resources/subscribe', 'fixture://nowhere/1', null, null, 'denied', 'catalog:unknown-resource', null],
    ]);
    // A gateway URI's row: the name the host used, and the route it wraps.
    await failure(client.subscribeResource({ uri: 'switchboard://fy/fixture://static/hello' }));
    const wrapped = auditRows(dataDir, `method = 'resources/subscribe' AND name = 'switchboard://fy/fixture://static/hello'`).at(-1);
    expect(wrapped).toMatchObject({ upstream: 'fy', original_name: 'fixture://static/hello', decision: 'denied', rule: 'no-static' });
  });

  it('dot segments and, in file: URIs, empty segments are refused before any rule sees them', async () => {
    expect(await failure(client.readResource({ uri: 'fixture://items/../static/hello' }))).toMatchObject({
      code: -32602,
      message: expect.stringContaining('must not contain . or .. path segments'),
    });
    const encoded = await failure(client.readResource({ uri: 'switchboard://fy/fixture://items/%2e%2e/static/hello' }));
    expect(encoded.message).toContain('must not contain . or .. path segments');
    expect((await failure(client.readResource({ uri: 'file:////etc/passwd' }))).message).toContain('must not contain empty path segments');
    expect((await client.readResource({ uri: 'fixture://items/7' })).contents).toHaveLength(1);
    // The rows say why: the URI's form, not an unknown resource (which fixture://items/../static/hello is not).
    const refused = auditRows(dataDir, `method = 'resources/read' AND error_code = -32602`).map((r) => [r.name, r.decision, r.rule]);
    expect(refused).toEqual(
      ['fixture://items/../static/hello', 'switchboard://fy/fixture://items/%2e%2e/static/hello', 'file:////etc/passwd'].map((uri) => [uri, 'denied', 'request:unnormalized-uri']),
    );
  });
});

describe('resource rules judge a URI as the MCP SDKs read it (the reference server, through its SDK)', () => {
  let client: Client;
  let configPath: string;
  const STATIC_DOC = 'demo://resource/static/document/features.md';

  beforeAll(async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'policy.yaml'),
      'defaultEffect: allow\neveryone: [reader]\nroles:\n  reader:\n    - { id: no-static, deny: [read, subscribe, list], resource: "demo://resource/static/**" }\n',
    );
    const everything = { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] };
    configPath = writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: { everything } }, dir);
    const daemon = await startDaemon(configPath);
    client = new Client({ name: 'e2e-policy-uri-readings', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl)));
  });
  afterAll(() => client?.close());

  it.each([
    ['with its scheme in capitals', STATIC_DOC.replace('demo:', 'DEMO:')],
    ['after a space', ` ${STATIC_DOC}`],
    ['by dot segments with a tab in them, from a URI the rule does not cover', 'demo://resource/dynamic/text/.\t./.\t./static/document/features.md'],
    ['by dot segments with a line break in them', 'demo://resource/dynamic/text/.\n./.\n./static/document/features.md'],
  ])('a denied URI spelt %s is refused, since the SDK server reads it as the denied one', async (_how, uri) => {
    expect(await failure(client.readResource({ uri }))).toMatchObject({ message: `Resource not found: ${uri}` });
    expect(await failure(client.subscribeResource({ uri }))).toMatchObject({ message: `Resource not found: ${uri}` });
    // policy check decides as the daemon does.
    const check = runCli(['policy', 'check', '--config', configPath, '--principal', 'loopback:anonymous', '--resource', uri, '--server', 'everything']);
    expect([check.code, check.stdout]).toEqual([3, expect.stringMatching(/^deny {2}rule: no-static\n/)]);
  });

  it('the URIs the policy allows are read as before', async () => {
    expect(await failure(client.readResource({ uri: STATIC_DOC }))).toMatchObject({ message: `Resource not found: ${STATIC_DOC}` });
    expect((await client.readResource({ uri: 'demo://resource/dynamic/text/1' })).contents[0]).toMatchObject({ uri: 'demo://resource/dynamic/text/1' });
  });
});

describe('resource updates reach only the sessions whose principal may subscribe to the URI updated', () => {
  let client: Client;
  let policyFile: string;
  const updates: string[] = [];
  const touch = (uri: string) => client.callTool({ name: 'fx__touch_resource', arguments: { uri, force: true } });

  beforeAll(async () => {
    const dir = tempDir();
    policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, 'defaultEffect: allow\neveryone: [reader]\nroles:\n  reader:\n    - { id: no-secret, deny: "*", resource: "fixture://items/secret*" }\n');
    // One server with resources: a URI it does not list (fixture://items/) routes to it.
    const daemon = await startDaemon(writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: { fx: stdioFixture() } }, dir));
    client = new Client({ name: 'e2e-policy-updates', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl)));
    client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
  });
  afterAll(() => client?.close());

  it("a subscription to a parent URI does not tell of a sub-resource the policy denies (an upstream may report one's update)", async () => {
    expect(await failure(client.subscribeResource({ uri: 'fixture://items/secret-plan' }))).toMatchObject({ message: expect.stringMatching(/^Resource not found/) });
    await client.subscribeResource({ uri: 'fixture://items/' });
    await touch('fixture://items/secret-plan');
    await touch('fixture://items/7');
    // In order from one upstream: once the second is here, the first would have been too.
    await eventually(() => updates.includes('fixture://items/7') || undefined, 10_000, 'the update of fixture://items/7');
    expect(updates).toEqual(['fixture://items/7']);
  });

  it('a subscription the policy no longer allows after a reload hears of no more updates', async () => {
    await client.subscribeResource({ uri: 'fixture://items/8' });
    let reloaded = false;
    client.setNotificationHandler('notifications/resources/list_changed', () => void (reloaded = true));
    writeFileSync(policyFile, 'defaultEffect: allow\neveryone: [reader]\nroles:\n  reader:\n    - { id: no-eight, deny: subscribe, resource: "fixture://items/8" }\n');
    await eventually(() => reloaded || undefined, 10_000, 'list_changed after the policy reload');
    updates.length = 0;
    await touch('fixture://items/8');
    await touch('fixture://items/7');
    await eventually(() => updates.includes('fixture://items/7') || undefined, 10_000, 'the update of fixture://items/7');
    expect(updates).toEqual(['fixture://items/7']);
  });
});

describe('a resource rule with several wildcards, and a long URI a host crafted', () => {
  let client: Client;

  beforeAll(async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'policy.yaml'), 'defaultEffect: allow\neveryone: [reader]\nroles:\n  reader:\n    - { id: no-pem, deny: read, resource: "fixture://**/secrets/**/*.pem" }\n');
    // fx is the one server with resources: any URI goes to it, past the rule.
    const daemon = await startDaemon(writeConfig({ policy: { file: 'policy.yaml' }, mcpServers: { fx: stdioFixture() } }, dir));
    client = new Client({ name: 'e2e-policy-long-uri', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl)));
  });
  afterAll(() => client?.close());

  // Matched by a backtracking RegExp, a read like this held the daemon's one thread for
  // minutes. As long as a host may send (MAX_URI_CHARS; a longer one is refused before the
  // policy sees it), .pem included.
  it('is judged in one pass: the read is answered and the daemon goes on serving', { timeout: 30_000 }, async () => {
    const uri = `fixture://items${'/secrets/x'.repeat(Math.floor((MAX_URI_CHARS - 'fixture://items.pem'.length) / 10))}`;
    expect(await failure(client.readResource({ uri }))).toMatchObject({ message: `Resource not found: ${uri}` });
    expect(await failure(client.readResource({ uri: `${uri}.pem` }))).toMatchObject({ message: `Resource not found: ${uri}.pem` });
    await client.ping();
  });
});
