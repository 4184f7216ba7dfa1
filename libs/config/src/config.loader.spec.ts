import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, ConfigErrorCode } from './config.errors.js';
import { loadConfig, loadConfigWithWarnings } from './config.loader.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string) => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};

function loadError(file: string, env: NodeJS.ProcessEnv = {}): ConfigError {
  try {
    loadConfig(file, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig: formats', () => {
  it('loads YAML and fills every default', () => {
    const file = write('gw.yaml', 'mcpServers:\n  demo:\n    command: node\n');
    expect(loadConfig(file, {})).toEqual({
      source: file,
      listen: { host: '127.0.0.1', port: 8780 },
      dataDir: join(dir, 'data'),
      namespace: 'prefix',
      separator: '__',
      pageSize: 250,
      lists: { maxItems: 10_000, maxBytes: 8_388_608 },
      timeouts: { connectMs: 10_000, requestMs: 60_000, maxRequestMs: 600_000, shutdownMs: 10_000, sessionIdleMs: 3_600_000 },
      security: { allowedHosts: [], allowedOrigins: [] },
      log: { level: 'info', format: 'auto' },
      auth: { mode: 'none', authorizationServers: [] },
      policy: {},
      rateLimits: { sessionsPerPrincipal: 1000 },
      relay: { timeoutMs: 300_000, maxSamplingTokens: 4096, inbox: true },
      approvals: { timeoutMs: 120_000, rememberMs: [900_000, 3_600_000, 28_800_000] },
      audit: {
        enabled: true,
        mode: 'strict',
        synchronous: 'normal',
        flushMs: 200,
        maxQueuedRows: 100_000,
        retention: '90d',
        checkpointEvery: '1h',
        maxArgumentBytes: 8192,
        completions: true,
        redact: { defaults: true, keys: [], patterns: [], commands: [] },
      },
      servers: [
        {
          name: 'demo',
          transport: 'stdio',
          command: 'node',
          args: [],
          env: {},
          timeouts: { connectMs: 10_000, requestMs: 60_000, maxRequestMs: 600_000 },
          lists: { maxItems: 10_000, maxBytes: 8_388_608 },
          enabled: true,
          pin: 'strict',
          isolation: 'shared',
        },
      ],
    });
  });

  it('loads JSON, and YAML-parses other extensions (YAML reads JSON too)', () => {
    const json = JSON.stringify({ listen: { port: 0 }, mcpServers: { r: { url: 'https://example.com/mcp' } } });
    for (const name of ['gw.json', 'gw.conf']) {
      const config = loadConfig(write(name, json), {});
      expect(config.listen).toEqual({ host: '127.0.0.1', port: 0 });
      expect(config.servers[0]).toMatchObject({ name: 'r', transport: 'http', url: 'https://example.com/mcp', headers: {} });
    }
  });

  it('accepts a JSON file saved with a byte-order mark', () => {
    const file = write('bom.json', '\uFEFF{"pageSize": 5}');
    expect(loadConfig(file, {}).pageSize).toBe(5);
  });

  it('loads a Claude Desktop file, with its extra keys as warnings', () => {
    const file = write(
      'claude_desktop_config.json',
      JSON.stringify({
        globalShortcut: 'Ctrl+Space',
        mcpServers: {
          fs: { command: 'npx', args: ['-y', 'server-fs'], env: { A: '1' }, autoApprove: [], alwaysAllow: ['read'] },
          web: { url: 'https://example.com/sse', transportType: 'sse', timeout: 30 },
        },
      }),
    );
    const { config, warnings } = loadConfigWithWarnings(file, {});
    expect(config.servers.map((s) => [s.name, s.transport])).toEqual([
      ['fs', 'stdio'],
      ['web', 'http'],
    ]);
    expect(warnings).toEqual([
      { file, path: 'mcpServers.fs.autoApprove', reason: 'unknown key, ignored' },
      { file, path: 'mcpServers.fs.alwaysAllow', reason: 'unknown key, ignored' },
      { file, path: 'mcpServers.web.transportType', reason: 'unknown key, ignored' },
      { file, path: 'mcpServers.web.timeout', reason: 'unknown key, ignored (did you mean `timeouts`?)' },
      { file, path: 'globalShortcut', reason: 'unknown key, ignored' },
    ]);
  });

  it('warns of a stdio command no start can run: a Windows name off Windows, and switchboard stdio with this very file', () => {
    const file = join(dir, 'claude_desktop_config.json');
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          win: { command: 'npx.cmd', args: ['-y', '@modelcontextprotocol/server-everything'] },
          self: { command: 'npx', args: ['switchboard', 'stdio', '--config', file] },
          selfNode: { command: 'node', args: ['/opt/switchboard/bin/switchboard.js', 'stdio', `--config=${file}`] },
          other: { command: 'npx', args: ['switchboard', 'stdio', '--config', join(dir, 'team.yaml')] },
          fine: { command: 'npx', args: ['-y', 'some-server', 'stdio', '--config', file] },
        },
      }),
    );
    const { warnings } = loadConfigWithWarnings(file, {});
    const selfReason =
      "runs switchboard stdio with this very file, which would list itself again: that Switchboard refuses to start, and this server stays down; remove the entry (a host's file lists Switchboard, the file Switchboard reads lists the servers)";
    expect(warnings).toEqual(
      process.platform === 'win32'
        ? [{ file, path: 'mcpServers.self', reason: selfReason }, { file, path: 'mcpServers.selfNode', reason: selfReason }]
        : [
            { file, path: 'mcpServers.win.command', reason: '"npx.cmd" is a Windows name: on this system write it without the extension ("npx")' },
            { file, path: 'mcpServers.self', reason: selfReason },
            { file, path: 'mcpServers.selfNode', reason: selfReason },
          ],
    );
  });

  it('warns of a JWKS fetched over plain HTTP from a host off loopback: whoever is on the path could swap the keys and sign tokens as anyone', () => {
    const jwt = (jwksUrl: string) => ({ auth: { jwt: { issuer: 'https://login.example.com', audience: 'switchboard', jwksUrl } }, mcpServers: {} });
    const file = write('jwks-http.json', JSON.stringify(jwt('http://keycloak.internal:8080/realms/eng/protocol/openid-connect/certs')));
    const { config, warnings } = loadConfigWithWarnings(file, {});
    expect(config.auth.jwt?.jwksUrl).toBe('http://keycloak.internal:8080/realms/eng/protocol/openid-connect/certs');
    expect(warnings).toEqual([
      {
        file,
        path: 'auth.jwt.jwksUrl',
        reason:
          "is plain http to keycloak.internal:8080, which is not a loopback address: whoever is on the path can replace the issuer's keys with their own and sign tokens as anyone; use https",
      },
    ]);
    for (const url of ['https://login.example.com/certs', 'http://127.0.0.1:8080/certs', 'http://localhost/certs', 'http://[::1]:9000/certs']) {
      expect(loadConfigWithWarnings(write('jwks-ok.json', JSON.stringify(jwt(url))), {}).warnings, url).toEqual([]);
    }
  });

  it('warns of a listener off loopback with no allowedHosts: any Host is served, and the metadata names whichever a request carries', () => {
    const listen = (host: string, security?: object) => ({ listen: { host, port: 8780 }, auth: { mode: 'required' }, ...(security && { security }), mcpServers: {} });
    const file = write('open-hosts.json', JSON.stringify(listen('0.0.0.0')));
    expect(loadConfigWithWarnings(file, {}).warnings).toEqual([
      {
        file,
        path: 'security.allowedHosts',
        reason:
          'is empty while listen.host 0.0.0.0 is not a loopback address: a request with any Host header is served (a DNS-rebinding page, a spoofed name), ' +
          'and the protected-resource metadata and 401s name whichever Host it carries; list the names hosts use, e.g. [gateway.internal:8780]',
      },
    ]);
    expect(loadConfigWithWarnings(write('listed.json', JSON.stringify(listen('0.0.0.0', { allowedHosts: ['gateway.internal:8780'] }))), {}).warnings).toEqual([]);
    expect(loadConfigWithWarnings(write('loopback.json', JSON.stringify(listen('127.0.0.1'))), {}).warnings).toEqual([]);
  });

  it('warns of a retention under a day, and of one shorter than the checkpoint interval: pruning deletes for good and verify still passes', () => {
    const audit = (settings: string) => write('audit.yaml', `audit: ${settings}\nmcpServers: {}\n`);
    const underADay = (text: string) =>
      `is ${text}, less than a day: each hourly pruning deletes every row older than that, for good, and \`audit verify\` still passes; 'off' keeps every row`;
    const underEvery = (text: string, every: string) =>
      `is ${text}, shorter than audit.checkpointEvery (${every}): each checkpoint's row is pruned before the next checkpoint is logged, ` +
      'so `audit verify --checkpoint` has no row left to check it against';
    const reasons = (settings: string) => loadConfigWithWarnings(audit(settings), {}).warnings.map((w) => `${w.path}: ${w.reason}`);

    expect(reasons('{ retention: 23h }')).toEqual([`audit.retention: ${underADay('23h')}`]);
    expect(reasons('{ retention: 2h, checkpointEvery: 3h }')).toEqual([`audit.retention: ${underADay('2h')}`, `audit.retention: ${underEvery('2h', '3h')}`]);
    expect(reasons('{ retention: 2d, checkpointEvery: 7d }')).toEqual([`audit.retention: ${underEvery('2d', '7d')}`]);
    // The default checkpoint interval (1h) is no longer than any retention the file takes.
    expect(reasons('{ retention: 1h }')).toEqual([`audit.retention: ${underADay('1h')}`]);
    for (const quiet of ['{}', '{ retention: 1d }', '{ retention: 90d, checkpointEvery: 7d }', '{ retention: 7d, checkpointEvery: 7d }', '{ retention: off }', '{ retention: 2d, checkpointEvery: off }']) {
      expect(reasons(quiet), quiet).toEqual([]);
    }
    // A value the schema refuses is its problem alone, not also a warning.
    expect(loadError(audit('{ retention: 30s }')).problems.map((p) => p.path)).toEqual(['audit.retention']);
  });

  it('warns of a relay.timeoutMs longer than timeouts.maxRequestMs: a question asked during a call ends with the call', () => {
    const file = (settings: string) => write('relay.yaml', `${settings}\nmcpServers: {}\n`);
    const longer = (relay: string, max: number) =>
      `is ${relay}, more than timeouts.maxRequestMs (${max}): a question an upstream asks during a call ends with the call, ` +
      `which timeouts.maxRequestMs ends at ${max} ms, so it never gets the rest; lower relay.timeoutMs or raise timeouts.maxRequestMs`;
    const reasons = (settings: string) => loadConfigWithWarnings(file(settings), {}).warnings.map((w) => `${w.path}: ${w.reason}`);

    expect(reasons('relay: { timeoutMs: 900000 }')).toEqual([`relay.timeoutMs: ${longer('900000', 600_000)}`]);
    expect(reasons('relay: { timeoutMs: 5000 }\ntimeouts: { requestMs: 1000, maxRequestMs: 4999 }')).toEqual([`relay.timeoutMs: ${longer('5000', 4999)}`]);
    // The default relay.timeoutMs (5 minutes) against a shorter hard limit the file sets.
    expect(reasons('timeouts: { maxRequestMs: 120000 }')).toEqual([`relay.timeoutMs: ${longer('300000 (the default)', 120_000)}`]);
    // A warning, not a refusal: questions asked outside any call still get all of it.
    expect(loadConfig(file('relay: { timeoutMs: 900000 }'), {}).relay.timeoutMs).toBe(900_000);
    for (const quiet of ['pageSize: 250', 'relay: { timeoutMs: 600000 }', 'relay: { timeoutMs: 1000 }\ntimeouts: { requestMs: 1000, maxRequestMs: 1000 }', 'timeouts: { maxRequestMs: 300000 }']) {
      expect(reasons(quiet), quiet).toEqual([]);
    }
    // A value the schema refuses is its problem alone, not also a warning.
    for (const [settings, path] of [
      ['relay: { timeoutMs: 0 }\ntimeouts: { maxRequestMs: 1000, requestMs: 1000 }', 'relay.timeoutMs'],
      ['relay: { timeoutMs: 900000 }\ntimeouts: { maxRequestMs: 1.5 }', 'timeouts.maxRequestMs'],
    ]) {
      const refused = loadError(file(settings));
      expect([refused.problems.map((p) => p.path), refused.warnings], settings).toEqual([[path], []]);
    }
  });

  it('names the known key a misspelt one was likely meant to be, at every level, and keeps it a warning', () => {
    const file = write(
      'typos.yaml',
      [
        'listen:',
        '  prot: 9000',
        'timeout:',
        '  requestMs: 5000',
        'audit:',
        '  mdoe: relaxed',
        '  redact:',
        '    Keys: [token]',
        'mcpServers:',
        '  a:',
        '    command: node',
        '    tpye: stdio',
        '    timeouts: { requestMS: 10 }',
        '    roots: [{ uri: "file:///tmp", nmae: tmp }]',
        '    shape: round',
      ].join('\n'),
    );
    const { config, warnings } = loadConfigWithWarnings(file, {});
    // Still only warnings: the settings they meant keep their defaults.
    expect(config.listen.port).toBe(8780);
    expect(warnings.map((w) => `${w.path}: ${w.reason}`)).toEqual([
      'listen.prot: unknown key, ignored (did you mean `port`?)',
      'audit.redact.Keys: unknown key, ignored (did you mean `keys`?)',
      'audit.mdoe: unknown key, ignored (did you mean `mode`?)',
      'mcpServers.a.timeouts.requestMS: unknown key, ignored (did you mean `requestMs`?)',
      'mcpServers.a.roots.0.nmae: unknown key, ignored (did you mean `name`?)',
      'mcpServers.a.tpye: unknown key, ignored (did you mean `type`?)',
      'mcpServers.a.shape: unknown key, ignored',
      'timeout: unknown key, ignored (did you mean `timeouts`?)',
    ]);
  });

  it('loads a VS Code mcp.json (`servers`, explicit types)', () => {
    const file = write(
      'mcp.json',
      JSON.stringify({
        servers: {
          local: { type: 'stdio', command: 'node', args: ['s.js'] },
          remote: { type: 'streamable-http', url: 'http://localhost:3000/mcp' },
          old: { type: 'sse', url: 'http://localhost:3001/sse', headers: { 'X-Key': 'k' } },
        },
      }),
    );
    const servers = loadConfig(file, {}).servers;
    expect(servers.map((s) => [s.name, s.transport])).toEqual([
      ['local', 'stdio'],
      ['remote', 'http'],
      ['old', 'sse'],
    ]);
    expect(servers[2]).toMatchObject({ headers: { 'X-Key': 'k' } });
  });

  it("names Windsurf's serverUrl, rather than only say that a url is missing", () => {
    const file = write('mcp_config.json', JSON.stringify({ mcpServers: { remote: { serverUrl: 'http://localhost:4000/mcp' } } }));
    const err = loadError(file);
    expect(err.problems).toEqual([{ file, path: 'mcpServers.remote.serverUrl', reason: `is written "url" here (serverUrl is Windsurf's name for it)` }]);
    expect(err.warnings).toEqual([]);
  });

  it("refuses Claude Code's headersHelper rather than connect without the headers it would give", () => {
    const server = { type: 'http', url: 'https://mcp.example.com/mcp', headersHelper: '/opt/bin/mcp-headers.sh', oauth: {} };
    const err = loadError(write('.mcp.json', JSON.stringify({ mcpServers: { api: server } })));
    expect(err.problems.map((p) => [p.path, p.reason.slice(0, 17)])).toEqual([['mcpServers.api.headersHelper', 'is not supported:']]);
    expect(err.warnings.map((w) => w.path)).toEqual(['mcpServers.api.oauth']);
  });

  it("says what to do instead of VS Code's null env value (remove the variable)", () => {
    const file = write('mcp.json', JSON.stringify({ servers: { a: { type: 'stdio', command: 'node', env: { X: null, PORT: 3000 } } } }));
    expect(loadError(file).problems).toEqual([
      { file, path: 'servers.a.env.X', reason: expect.stringMatching(/^must be a string; to keep a variable from the server, leave it out/) },
      { file, path: 'servers.a.env.PORT', reason: 'must be a string (quote numbers and booleans)' },
    ]);
  });

  it('refuses envFile (VS Code, Cursor) rather than start the server without the variables it holds', () => {
    const file = write(
      'mcp.json',
      JSON.stringify({ servers: { db: { type: 'stdio', command: 'node', args: ['s.js'], envFile: '.env', dev: {} } } }),
    );
    const err = loadError(file);
    expect(err.problems).toEqual([{ file, path: 'servers.db.envFile', reason: expect.stringMatching(/^is not supported: .*\$\{env:NAME\}/) }]);
    expect(err.warnings).toEqual([{ file, path: 'servers.db.dev', reason: 'unknown key, ignored' }]);
  });

  it('keeps servers in file order, disabled ones included', () => {
    const file = write(
      'gw.yaml',
      'mcpServers:\n  zeta: { command: a }\n  alpha: { command: b, disabled: true }\n  mid: { url: "http://h/mcp", disabled: false }\n',
    );
    expect(loadConfig(file, {}).servers.map((s) => [s.name, s.enabled])).toEqual([
      ['zeta', true],
      ['alpha', false],
      ['mid', true],
    ]);
  });

  it('resolves dataDir and cwd against the config file directory, and keeps absolute ones', () => {
    const file = write('gw.yaml', 'dataDir: ../state\nmcpServers:\n  a: { command: x, cwd: tools }\n  b: { command: x, cwd: /opt/b }\n');
    const config = loadConfig(file, {});
    expect(config.dataDir).toBe(join(dir, '..', 'state'));
    expect(config.servers.map((s) => (s.transport === 'stdio' ? s.cwd : ''))).toEqual([join(dir, 'tools'), '/opt/b']);
  });

  it('merges per-server timeouts over the top-level ones', () => {
    const file = write(
      'gw.yaml',
      'timeouts: { connectMs: 1000, requestMs: 2000, maxRequestMs: 3000 }\nmcpServers:\n  a: { command: x, timeouts: { requestMs: 2500 } }\n',
    );
    const config = loadConfig(file, {});
    expect(config.timeouts).toEqual({ connectMs: 1000, requestMs: 2000, maxRequestMs: 3000, shutdownMs: 10_000, sessionIdleMs: 3_600_000 });
    expect(config.servers[0]!.timeouts).toEqual({ connectMs: 1000, requestMs: 2500, maxRequestMs: 3000 });
  });

  it('merges per-server list limits over the top-level ones', () => {
    const file = write(
      'gw.yaml',
      'lists: { maxItems: 500 }\nmcpServers:\n  a: { command: x, lists: { maxBytes: 4096 } }\n  b: { command: y, lists: { maxItems: 20000 } }\n',
    );
    const config = loadConfig(file, {});
    expect(config.lists).toEqual({ maxItems: 500, maxBytes: 8_388_608 });
    expect(config.servers.map((s) => s.lists)).toEqual([
      { maxItems: 500, maxBytes: 4096 },
      { maxItems: 20_000, maxBytes: 8_388_608 },
    ]);
  });

  it('keeps alias and namespace overrides', () => {
    const file = write('gw.yaml', 'mcpServers:\n  github-enterprise: { url: "https://ghe/mcp", alias: ghe, namespace: none }\n');
    expect(loadConfig(file, {}).servers[0]).toMatchObject({ alias: 'ghe', namespace: 'none' });
  });

  it('accepts a config with no servers at all', () => {
    expect(loadConfig(write('gw.yaml', 'listen: { port: 9000 }\n'), {}).servers).toEqual([]);
  });
});

describe('loadConfig: unreadable files and syntax errors', () => {
  it('reports a missing file', () => {
    const err = loadError(join(dir, 'nope.yaml'));
    expect(err.code).toBe(ConfigErrorCode.Unreadable);
    expect(err.problems).toEqual([{ file: join(dir, 'nope.yaml'), path: '', reason: 'cannot read: file not found' }]);
  });

  it('reports a directory given as the file', () => {
    expect(loadError(dir).problems[0]!.reason).toBe('cannot read: is a directory, not a file');
  });

  it('gives the line and column of a JSON syntax error', () => {
    const file = write('bad.json', '{\n  "mcpServers": {\n    "a": { "command": "x" "args": [] }\n  }\n}\n');
    const err = loadError(file);
    expect(err.code).toBe(ConfigErrorCode.Syntax);
    expect(err.problems).toEqual([
      { file, path: '', reason: "JSON syntax error at line 3, column 27: Expected ',' or '}' after property value" },
    ]);
  });

  it('keeps a JSON error short when V8 quotes the whole input', () => {
    const file = write('bad.json', `{"a": [${'1,'.repeat(50)}x]}`);
    expect(loadError(file).problems[0]!.reason).toBe("JSON syntax error at line 1, column 108: Unexpected token 'x'");
  });

  it('gives the line and column of a YAML syntax error', () => {
    const file = write('bad.yaml', 'listen:\n  host: a\n port: 1\n');
    expect(loadError(file).problems).toEqual([
      { file, path: '', reason: 'YAML syntax error at line 3, column 1: All mapping items must start at the same column' },
    ]);
  });

  it('refuses duplicate YAML keys', () => {
    const file = write('dup.yaml', 'mcpServers:\n  a: { command: x }\n  a: { command: y }\n');
    expect(loadError(file).problems[0]!.reason).toBe('YAML syntax error at line 3, column 3: Map keys must be unique');
  });

  it('refuses an empty file and a file that is not a mapping', () => {
    for (const text of ['', '- a\n- b\n', '42']) {
      const [problem] = loadError(write('x.yaml', text)).problems;
      expect(problem).toMatchObject({ path: '', reason: expect.stringMatching(/^must be a mapping of settings/) });
    }
  });
});

describe('ConfigError', () => {
  it('summarises every problem, and the unknown keys that may explain them', () => {
    const file = write('bad.yaml', 'pageSize: 0\nmcpServers:\n  a:\n    comand: node\n');
    const err = loadError(file);
    expect(err.name).toBe('ConfigError');
    expect(err.message).toBe(
      [
        `Invalid config file ${file}:`,
        '  - pageSize: must be an integer from 1 to 1000',
        '  - mcpServers.a: needs "command" (a stdio server) or "url" (an http or sse server)',
        'Warnings:',
        '  - mcpServers.a.comand: unknown key, ignored (did you mean `command`?)',
      ].join('\n'),
    );
  });

  it('resolves a relative file name to the absolute path it reports', () => {
    const err = loadError('./definitely-not-here.yaml');
    expect(err.file).toBe(join(process.cwd(), 'definitely-not-here.yaml'));
    expect(err.problems[0]!.file).toBe(err.file);
  });
});
