import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, ConfigErrorCode } from './config.errors.js';
import { loadConfig } from './config.loader.js';
import { durationMs } from '@switchboard/core';
import { AUDIT_CHECKPOINT_EVERY } from './config.schema.audit.js';

let dir: string;
let count = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-config-rules-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The problems (path and reason) of a file that must be refused. */
function problemsOf(yaml: string, env: NodeJS.ProcessEnv = {}): Array<{ path: string; reason: string }> {
  const file = join(dir, `c${++count}.yaml`);
  writeFileSync(file, yaml);
  try {
    loadConfig(file, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    expect(err.code).toBe(ConfigErrorCode.Invalid);
    for (const p of err.problems) expect(p.file).toBe(file);
    return err.problems.map(({ path, reason }) => ({ path, reason }));
  }
  throw new Error(`expected ${yaml} to be refused`);
}

const MS = 'must be a whole number of milliseconds from 1 to 2147483647';
const REMEMBER = 'must be whole seconds in milliseconds, from 1000 (1 second) to 2147483000 (900000 is 15 minutes)';

describe('top-level settings', () => {
  it.each([
    ['listen: { port: 65536 }', 'listen.port', 'must be an integer from 0 to 65535'],
    ['listen: { port: -1 }', 'listen.port', 'must be an integer from 0 to 65535'],
    ['listen: { port: "8780" }', 'listen.port', 'must be an integer from 0 to 65535'],
    ['listen: { host: "" }', 'listen.host', 'must not be empty'],
    ['listen: { host: 127 }', 'listen.host', 'must be a string'],
    ['listen: { host: "[::1]" }', 'listen.host', 'an IPv6 address is written without brackets here (::1, not [::1])'],
    ['listen: { host: 0.0.0.0 }', 'auth.mode', expect.stringMatching(/^must be required to listen on 0\.0\.0\.0, which is not a loopback address/)],
    ['{ listen: { host: "127.evil.example" }, auth: { mode: none } }', 'auth.mode', expect.stringContaining('not a loopback address')],
    ['dataDir: ""', 'dataDir', 'must not be empty'],
    ['namespace: always', 'namespace', 'must be one of: prefix, auto, none'],
    ['separator: ""', 'separator', 'must be 1 to 4 of A-Z a-z 0-9 _ . -'],
    ['separator: "::"', 'separator', 'must be 1 to 4 of A-Z a-z 0-9 _ . -'],
    ['separator: "_____"', 'separator', 'must be 1 to 4 of A-Z a-z 0-9 _ . -'],
    ['pageSize: 0', 'pageSize', 'must be an integer from 1 to 1000'],
    ['pageSize: 1001', 'pageSize', 'must be an integer from 1 to 1000'],
    ['pageSize: 2.5', 'pageSize', 'must be an integer from 1 to 1000'],
    ['lists: { maxItems: 0 }', 'lists.maxItems', 'must be an integer from 1 to 1000000'],
    ['lists: { maxItems: 2.5 }', 'lists.maxItems', 'must be an integer from 1 to 1000000'],
    ['lists: { maxItems: 1000001 }', 'lists.maxItems', 'must be an integer from 1 to 1000000'],
    ['lists: { maxBytes: 1023 }', 'lists.maxBytes', 'must be an integer from 1024 to 1073741824'],
    ['lists: { maxBytes: 8MiB }', 'lists.maxBytes', 'must be an integer from 1024 to 1073741824'],
    ['lists: 10000', 'lists', 'must be a mapping (an object)'],
    ['timeouts: { connectMs: 0 }', 'timeouts.connectMs', MS],
    ['timeouts: { shutdownMs: -5 }', 'timeouts.shutdownMs', MS],
    ['timeouts: { sessionIdleMs: 0 }', 'timeouts.sessionIdleMs', MS],
    ['timeouts: { requestMs: 1.5 }', 'timeouts.requestMs', MS],
    ['timeouts: { maxRequestMs: 3000000000 }', 'timeouts.maxRequestMs', MS],
    ['timeouts: { requestMs: 5000, maxRequestMs: 4999 }', 'timeouts.maxRequestMs', 'must be at least timeouts.requestMs (5000)'],
    ['timeouts: { requestMs: 700000 }', 'timeouts.maxRequestMs', 'must be at least timeouts.requestMs (700000)'],
    ['security: { allowedOrigins: "https://a" }', 'security.allowedOrigins', 'must be a list'],
    ['security: { allowedHosts: [""] }', 'security.allowedHosts.0', 'must not be empty'],
    ['log: { level: verbose }', 'log.level', 'must be one of: trace, debug, info, warn, error, fatal, silent'],
    ['log: info', 'log', 'must be a mapping (an object)'],
    ['audit: { mode: lax }', 'audit.mode', 'must be one of: strict, relaxed'],
    ['audit: { synchronous: off }', 'audit.synchronous', 'must be one of: normal, full'],
    ['audit: { retention: 90 }', 'audit.retention', 'must be a string (quote numbers and booleans)'],
    ['audit: { retention: 3months }', 'audit.retention', "must be a count and a unit (s, m, h, d, w) like '90d', or 'off'"],
    ['audit: { retention: 0d }', 'audit.retention', "must be more than 0 (pruning would remove all but the newest row); 'off' keeps every row"],
    ['audit: { retention: 00m }', 'audit.retention', "must be more than 0 (pruning would remove all but the newest row); 'off' keeps every row"],
    ['audit: { checkpointEvery: 60 }', 'audit.checkpointEvery', 'must be a string (quote numbers and booleans)'],
    ['audit: { checkpointEvery: hourly }', 'audit.checkpointEvery', "must be a count and a unit (s, m, h, d, w) like '1h', or 'off'"],
    ['audit: { checkpointEvery: 0s }', 'audit.checkpointEvery', "must be more than 0; 'off' logs no checkpoints"],
    ['audit: { checkpointEvery: 8d }', 'audit.checkpointEvery', 'must be at most 7d'],
    ['audit: { checkpointEvery: 2w }', 'audit.checkpointEvery', 'must be at most 7d'],
    ['audit: { flushMs: 0 }', 'audit.flushMs', 'must be a whole number of milliseconds from 1 to 60000'],
    ['audit: { maxQueuedRows: 10 }', 'audit.maxQueuedRows', 'must be an integer from 1000 to 10000000'],
    ['audit: { redact: { patterns: ["(unclosed"] } }', 'audit.redact.patterns.0', 'must be a valid regular expression'],
    ['audit: { redact: { keys: [""] } }', 'audit.redact.keys.0', 'must not be empty'],
    ['audit: { redact: { commands: ["/usr/bin/acme-run"] } }', 'audit.redact.commands.0', "must be a command's name, without blanks or a path (acme-run, not /usr/bin/acme-run)"],
    ['audit: { redact: { commands: ["acme run"] } }', 'audit.redact.commands.0', "must be a command's name, without blanks or a path (acme-run, not /usr/bin/acme-run)"],
    ['mcpServers: [a, b]', 'mcpServers', 'must be a mapping (an object)'],
    // Labelled "For 0 seconds" and "For 2 seconds" on the approval form, and seconds written
    // for milliseconds (900 for 15 minutes) remembered an approval for under a second.
    ['approvals: { rememberMs: [900] }', 'approvals.rememberMs.0', REMEMBER],
    ['approvals: { rememberMs: [900000, 500] }', 'approvals.rememberMs.1', REMEMBER],
    ['approvals: { rememberMs: [0] }', 'approvals.rememberMs.0', REMEMBER],
    ['approvals: { rememberMs: [1500] }', 'approvals.rememberMs.0', REMEMBER],
    ['approvals: { rememberMs: [2147483647] }', 'approvals.rememberMs.0', REMEMBER],
    ['approvals: { rememberMs: ["15m"] }', 'approvals.rememberMs.0', REMEMBER],
    ['mcpServers: {}\nservers: {}', 'servers', 'cannot be used together with mcpServers (they are synonyms); keep one'],
  ])('%s', (yaml, path, reason) => {
    expect(problemsOf(yaml)).toEqual([{ path, reason }]);
  });

  it('takes approvals.rememberMs of whole seconds, a second and more', () => {
    const file = join(dir, 'remember.yaml');
    writeFileSync(file, 'approvals: { rememberMs: [1000, 90000, 900000, 2147483000] }\n');
    expect(loadConfig(file, {}).approvals.rememberMs).toEqual([1000, 90_000, 900_000, 2_147_483_000]);
  });

  it('refuses a duration approvals.rememberMs lists twice, naming it and where it was first', () => {
    // Each duration is one choice on the approval form and in the inbox: a repeat showed it twice.
    const repeats = (value: string, first: number) => `repeats ${value} of approvals.rememberMs.${first}; list each duration once`;
    expect(problemsOf('approvals: { rememberMs: [900000, 3600000, 900000] }')).toEqual([
      { path: 'approvals.rememberMs.2', reason: repeats('900000 (15 minutes)', 0) },
    ]);
    expect(problemsOf('approvals: { rememberMs: [1000, 60000, 60000, 60000, 1000] }')).toEqual([
      { path: 'approvals.rememberMs.2', reason: repeats('60000 (1 minute)', 1) },
      { path: 'approvals.rememberMs.3', reason: repeats('60000 (1 minute)', 1) },
      { path: 'approvals.rememberMs.4', reason: repeats('1000 (1 second)', 0) },
    ]);
  });

  it('lists a bad audit.checkpointEvery with the other problems, and reads a good one', () => {
    expect(problemsOf('audit: { retention: 3months, checkpointEvery: 1y, flushMs: 0 }')).toEqual([
      { path: 'audit.flushMs', reason: 'must be a whole number of milliseconds from 1 to 60000' },
      { path: 'audit.retention', reason: "must be a count and a unit (s, m, h, d, w) like '90d', or 'off'" },
      { path: 'audit.checkpointEvery', reason: "must be a count and a unit (s, m, h, d, w) like '1h', or 'off'" },
    ]);
    const file = join(dir, 'checkpoint-every.yaml');
    writeFileSync(file, 'audit: { checkpointEvery: 30s }\n');
    const every = loadConfig(file, {}).audit.checkpointEvery;
    expect([every, durationMs(every, AUDIT_CHECKPOINT_EVERY)]).toEqual(['30s', 30_000]);
    expect(durationMs('off', AUDIT_CHECKPOINT_EVERY)).toBeUndefined();
    expect(durationMs('7d', AUDIT_CHECKPOINT_EVERY)).toBe(604_800_000);
    expect(durationMs('1w', AUDIT_CHECKPOINT_EVERY)).toBe(604_800_000);
  });
});

describe('a key left out, and a key of the wrong type', () => {
  const JWT = 'auth: { mode: required, jwt: { issuer: "https://login.example.com"';
  it.each([
    // Left out: required, whatever the field's own message for a value that is there says.
    [`${JWT} } }`, [['auth.jwt.audience', 'is required'], ['auth.jwt.jwksUrl', 'is required']]],
    ['auth: { jwt: {} }', [['auth.jwt.issuer', 'is required'], ['auth.jwt.audience', 'is required'], ['auth.jwt.jwksUrl', 'is required']]],
    ['rateLimits: { perPrincipal: { points: 5 } }', [['rateLimits.perPrincipal.durationSec', 'is required']]],
    ['rateLimits: { perPrincipalTool: { durationSec: 60 } }', [['rateLimits.perPrincipalTool.points', 'is required']]],
    ['mcpServers:\n  s: { command: x, roots: [{ name: r }] }', [['mcpServers.s.roots.0.uri', 'is required']]],
    // There, of the wrong type (null included: the key is written): what it must be.
    [`${JWT}, audience: 5, jwksUrl: 7 } }`, [['auth.jwt.audience', 'must be a string'], ['auth.jwt.jwksUrl', 'must be an http(s) URL']]],
    [`${JWT}, audience: null, jwksUrl: "https://login.example.com/jwks" } }`, [['auth.jwt.audience', 'must be a string']]],
    ['rateLimits: { perPrincipal: { points: 5, durationSec: "60" } }', [['rateLimits.perPrincipal.durationSec', 'must be an integer from 1 to 86400']]],
    ['mcpServers:\n  s: { command: x, roots: [{ uri: 5 }] }', [['mcpServers.s.roots.0.uri', 'must be a string']]],
  ])('%s', (yaml, expected) => {
    expect(problemsOf(yaml)).toEqual(expected.map(([path, reason]) => ({ path, reason })));
  });
});

describe('auth.jwt issuer and audience', () => {
  const jwt = (issuer: string, audience: string) =>
    `auth: { mode: required, jwt: { issuer: ${JSON.stringify(issuer)}, audience: ${JSON.stringify(audience)}, jwksUrl: "https://login.example.com/jwks" } }`;

  it('refuses white space around either: a token claim is compared exactly, so it could never match', () => {
    expect(problemsOf(jwt('https://login.example.com', ' switchboard'))).toEqual([
      { path: 'auth.jwt.audience', reason: "has white space at its start or end (' switchboard'): no token's aud could match it; remove it" },
    ]);
    expect(problemsOf(jwt(' https://login.example.com/ ', 'switchboard\t'))).toEqual([
      { path: 'auth.jwt.issuer', reason: "has white space at its start or end (' https://login.example.com/ '): no token's iss could match it; remove it" },
      { path: 'auth.jwt.audience', reason: "has white space at its start or end ('switchboard\\t'): no token's aud could match it; remove it" },
    ]);
    // Inside a value it is the value: compared as it is.
    const file = join(dir, 'audience-with-space.yaml');
    writeFileSync(file, jwt('https://login.example.com', 'my gateway'));
    expect(loadConfig(file, {}).auth.jwt?.audience).toBe('my gateway');
  });
});

describe('servers', () => {
  const one = (server: string) => `mcpServers:\n  s: ${server}\n`;

  it.each([
    ['{ command: "" }', 'mcpServers.s.command', 'must not be empty'],
    ['{ command: x, args: [--port, 3000] }', 'mcpServers.s.args.1', 'must be a string (quote numbers and booleans)'],
    ['{ command: x, args: "--a" }', 'mcpServers.s.args', 'must be a list'],
    ['{ command: x, env: { DEBUG: true } }', 'mcpServers.s.env.DEBUG', 'must be a string (quote numbers and booleans)'],
    ['{ url: "http://h/mcp", headers: { X-N: 1 } }', 'mcpServers.s.headers.X-N', 'must be a string (quote numbers and booleans)'],
    ['{ command: x, cwd: "" }', 'mcpServers.s.cwd', 'must not be empty'],
    ['{ type: websocket, url: "http://h" }', 'mcpServers.s.type', 'must be one of: stdio, http, streamable-http, sse'],
    ['{ type: stdio }', 'mcpServers.s.command', 'is required for a stdio server'],
    ['{ type: http }', 'mcpServers.s.url', 'is required for an http server'],
    ['{ type: sse }', 'mcpServers.s.url', 'is required for an sse server'],
    ['{ type: http, url: "http://h/mcp", command: x }', 'mcpServers.s.command', 'is not allowed on an http server'],
    ['{ command: x, url: "http://h/mcp" }', 'mcpServers.s.url', 'is not allowed on a stdio server'],
    ['{ command: x, headers: {} }', 'mcpServers.s.headers', 'is not allowed on a stdio server'],
    ['{ url: "http://h/mcp", env: {} }', 'mcpServers.s.env', 'is not allowed on an http server'],
    ['{ type: sse, url: "http://h/sse", cwd: . }', 'mcpServers.s.cwd', 'is not allowed on an sse server'],
    ['{}', 'mcpServers.s', 'needs "command" (a stdio server) or "url" (an http or sse server)'],
    ['{ disabled: true }', 'mcpServers.s', 'needs "command" (a stdio server) or "url" (an http or sse server)'],
    ['{ url: "ftp://h/mcp" }', 'mcpServers.s.url', 'must be an http(s) URL'],
    ['{ url: "file:///tmp/x" }', 'mcpServers.s.url', 'must be an http(s) URL'],
    ['{ url: "localhost:3000/mcp" }', 'mcpServers.s.url', 'must be an http(s) URL'],
    ['{ url: "not a url" }', 'mcpServers.s.url', 'must be an http(s) URL'],
    ['{ command: x, alias: "has space" }', 'mcpServers.s.alias', 'must be 1 to 24 of A-Z a-z 0-9 _ -'],
    ['{ command: x, alias: "" }', 'mcpServers.s.alias', 'must be 1 to 24 of A-Z a-z 0-9 _ -'],
    [`{ command: x, alias: ${'a'.repeat(25)} }`, 'mcpServers.s.alias', 'must be 1 to 24 of A-Z a-z 0-9 _ -'],
    ['{ command: x, namespace: sometimes }', 'mcpServers.s.namespace', 'must be one of: prefix, auto, none'],
    ['{ command: x, disabled: "yes" }', 'mcpServers.s.disabled', 'must be true or false'],
    ['{ command: x, timeouts: { connectMs: 0 } }', 'mcpServers.s.timeouts.connectMs', MS],
    ['{ command: x, lists: { maxItems: -1 } }', 'mcpServers.s.lists.maxItems', 'must be an integer from 1 to 1000000'],
    ['{ command: x, lists: { maxBytes: 2000000000 } }', 'mcpServers.s.lists.maxBytes', 'must be an integer from 1024 to 1073741824'],
    ['{ command: x, timeouts: { requestMs: 10, maxRequestMs: 5 } }', 'mcpServers.s.timeouts.maxRequestMs', 'must be at least requestMs (10)'],
    ['{ command: x, timeouts: { maxRequestMs: 5 } }', 'mcpServers.s.timeouts.maxRequestMs', 'must be at least requestMs (60000)'],
    [
      '{ command: x, timeouts: { requestMs: 600001 } }',
      'mcpServers.s.timeouts.requestMs',
      'must not exceed the top-level timeouts.maxRequestMs (600000)',
    ],
  ])('%s', (server, path, reason) => {
    expect(problemsOf(one(server))).toEqual([{ path, reason }]);
  });

  it('takes per-session isolation and pinned file:// roots', () => {
    const file = join(dir, 'roots.yaml');
    writeFileSync(
      file,
      'mcpServers:\n  s:\n    command: x\n    isolation: per-session\n    roots: [{ uri: "file:///srv/a", name: A }, { uri: "file:///srv/b" }]\n  t: { command: y }\n',
    );
    const [s, t] = loadConfig(file, {}).servers;
    expect(s).toMatchObject({ isolation: 'per-session', roots: [{ uri: 'file:///srv/a', name: 'A' }, { uri: 'file:///srv/b' }] });
    expect(t.roots).toBeUndefined();
  });

  it('lists every problem of pinned roots', () => {
    const yaml = [
      'mcpServers:',
      '  s:',
      '    command: x',
      '    isolation: per-everyone',
      '    roots:',
      '      - { uri: "https://example.test/repo" }',
      '      - { uri: "/srv/plain/path", name: 7 }',
      '      - { name: nameless }',
      '      - "file:///a-string"',
      '  t: { command: x, roots: { uri: "file:///x" } }',
    ].join('\n');
    const ROOT = 'must be a file:// URI (roots are file URIs)';
    expect(problemsOf(yaml)).toEqual([
      { path: 'mcpServers.s.isolation', reason: 'must be one of: shared, per-session, per-principal' },
      { path: 'mcpServers.s.roots.0.uri', reason: ROOT },
      { path: 'mcpServers.s.roots.1.uri', reason: ROOT },
      { path: 'mcpServers.s.roots.1.name', reason: 'must be a string (quote numbers and booleans)' },
      { path: 'mcpServers.s.roots.2.uri', reason: 'is required' },
      { path: 'mcpServers.s.roots.3', reason: 'must be a mapping (an object)' },
      { path: 'mcpServers.t.roots', reason: 'must be a list' },
    ]);
  });

  it('accepts any characters in a server name, and quotes odd ones in paths', () => {
    const file = join(dir, 'names.yaml');
    writeFileSync(file, 'mcpServers:\n  "my server.io": { command: x }\n  "ünï": { command: y }\n');
    expect(loadConfig(file, {}).servers.map((s) => s.name)).toEqual(['my server.io', 'ünï']);
    expect(problemsOf('mcpServers:\n  "my.server": { url: "ftp://x" }\n')).toEqual([
      { path: 'mcpServers["my.server"].url', reason: 'must be an http(s) URL' },
    ]);
  });

  it('refuses empty and over-long server names', () => {
    const long = 'n'.repeat(65);
    expect(problemsOf(`mcpServers:\n  "": { command: x }\n  ${long}: { command: x }\n  ${'n'.repeat(64)}: { command: x }\n`)).toEqual([
      { path: 'mcpServers[""]', reason: 'server name must not be empty' },
      { path: `mcpServers.${long}`, reason: 'server name is longer than 64 characters' },
    ]);
  });

  it('refuses __proto__ as a name rather than losing the server', () => {
    expect(problemsOf('mcpServers:\n  __proto__: { command: x }\n')).toEqual([
      { path: 'mcpServers.__proto__', reason: 'server name is reserved' },
    ]);
  });

  it('refuses names that differ only by case', () => {
    expect(problemsOf('mcpServers:\n  github: { command: x }\n  GitHub: { command: y }\n')).toEqual([
      { path: 'mcpServers.GitHub', reason: 'differs from server "github" only by case' },
    ]);
  });

  it('refuses an alias used twice or equal to another server name', () => {
    const yaml = [
      'mcpServers:',
      '  a: { command: x, alias: short }',
      '  b: { command: x, alias: Short }',
      '  c: { command: x, alias: A }',
      '  d: { command: x, alias: d }',
    ].join('\n');
    expect(problemsOf(yaml)).toEqual([
      { path: 'mcpServers.b.alias', reason: 'is also the alias of server "a"' },
      { path: 'mcpServers.c.alias', reason: 'is the name of server "a"' },
    ]);
  });

  it('applies the same rules to `servers`', () => {
    expect(problemsOf('servers:\n  s: { type: stdio, url: "http://h" }\n')).toEqual([
      { path: 'servers.s.command', reason: 'is required for a stdio server' },
      { path: 'servers.s.url', reason: 'is not allowed on a stdio server' },
    ]);
  });
});

describe('variables', () => {
  const env = { TOKEN: 't0k', HOST: 'api.example.com', EMPTY: '' };

  it('expands ${NAME} and ${env:NAME} in command, args, env, cwd, url and headers', () => {
    const file = join(dir, 'vars.yaml');
    writeFileSync(
      file,
      [
        'mcpServers:',
        '  local:',
        '    command: "${HOST}-cli"',
        '    args: ["--token=${env:TOKEN}", "x${EMPTY}y"]',
        '    env: { T: "${TOKEN}" }',
        '    cwd: "/srv/${HOST}"',
        '  remote:',
        '    url: "https://${env:HOST}/mcp"',
        '    headers: { Authorization: "Bearer ${env:TOKEN}", X-Literal: "$${TOKEN} and $$HOME" }',
      ].join('\n'),
    );
    const [local, remote] = loadConfig(file, env).servers;
    expect(local).toMatchObject({
      command: 'api.example.com-cli',
      args: ['--token=t0k', 'xy'],
      env: { T: 't0k' },
      cwd: '/srv/api.example.com',
    });
    expect(remote).toMatchObject({
      url: 'https://api.example.com/mcp',
      headers: { Authorization: 'Bearer t0k', 'X-Literal': '${TOKEN} and $$HOME' },
    });
  });

  it('does not expand anywhere else', () => {
    const file = join(dir, 'literal.yaml');
    writeFileSync(file, 'dataDir: "/tmp/${HOST}"\n');
    expect(loadConfig(file, env).dataDir).toBe('/tmp/${HOST}');
  });

  it('reports each missing variable at its path, once', () => {
    const yaml = [
      'mcpServers:',
      '  r:',
      '    url: "https://${env:API_HOST}/mcp"',
      '    headers: { Authorization: "Bearer ${GITHUB_TOKEN}" }',
      '  l: { command: x, args: [ok, "${A}${B}"], disabled: true }',
    ].join('\n');
    expect(problemsOf(yaml, env)).toEqual([
      { path: 'mcpServers.r.url', reason: 'environment variable API_HOST is not set' },
      { path: 'mcpServers.r.headers.Authorization', reason: 'environment variable GITHUB_TOKEN is not set' },
      { path: 'mcpServers.l.args.1', reason: 'environment variable A is not set' },
      { path: 'mcpServers.l.args.1', reason: 'environment variable B is not set' },
    ]);
  });

  it("takes Claude Code's ${NAME:-default}: the default when the variable is unset or empty", () => {
    const file = join(dir, 'mcp.json');
    const servers = {
      api: {
        type: 'http',
        url: '${API_BASE_URL:-https://api.example.com}/mcp',
        headers: { Authorization: 'Bearer ${TOKEN:-}', 'X-Region': '${env:REGION:-eu}', 'X-Empty': '${EMPTY:-none}' },
      },
    };
    writeFileSync(file, JSON.stringify({ mcpServers: servers }));
    expect(loadConfig(file, env).servers[0]).toMatchObject({
      url: 'https://api.example.com/mcp',
      headers: { Authorization: 'Bearer t0k', 'X-Region': 'eu', 'X-Empty': 'none' },
    });
  });

  it("names VS Code's and Cursor's own variables as the editor's, not as unset environment variables", () => {
    const server = {
      type: 'stdio',
      command: 'node',
      args: ['${workspaceFolder}/server.js', '${userHome}${/}data', '${config:db.path}'],
      env: { API_KEY: '${input:api-key}' },
    };
    const inputs = [{ type: 'promptString', id: 'api-key', password: true }];
    const problems = problemsOf(JSON.stringify({ inputs, servers: { db: server } }), env);
    expect(problems.map((p) => [p.path, p.reason.replace(/ is filled in by .*| is a VS Code input, .*/, ' ~')])).toEqual([
      ['servers.db.args.0', '"${workspaceFolder}" ~'],
      ['servers.db.args.1', '"${userHome}" ~'],
      ['servers.db.args.1', '"${/}" ~'],
      ['servers.db.args.2', '"${config:db.path}" ~'],
      ['servers.db.env.API_KEY', '"${input:api-key}" ~'],
    ]);
    expect(problems[4]!.reason).toContain("Switchboard cannot ask: use ${env:NAME} and set NAME in the daemon's environment");
    // Exported by the user, it is an environment variable like any other.
    const file = join(dir, 'workspace.json');
    writeFileSync(file, JSON.stringify({ servers: { db: { command: 'node', args: ['${workspaceFolder}/s.js'] } } }));
    expect(loadConfig(file, { workspaceFolder: '/home/me/p' }).servers[0]).toMatchObject({ args: ['/home/me/p/s.js'] });
  });

  it('reports malformed references', () => {
    expect(problemsOf('mcpServers:\n  l: { command: "${foo-bar}", args: ["${open"] }\n')).toEqual([
      {
        path: 'mcpServers.l.command',
        reason: '"${foo-bar}" is not a variable reference; use ${NAME}, ${env:NAME} or ${NAME:-default}, or "$${" for a literal "${"',
      },
      { path: 'mcpServers.l.args.0', reason: 'has a "${" with no closing "}"; write "$${" for a literal "${"' },
    ]);
  });
});

describe('all problems at once', () => {
  it('reports every problem of a file in one error', () => {
    const yaml = [
      'listen: { port: 99999 }',
      'separator: "::"',
      'timeouts: { requestMs: 0 }',
      'mcpServers:',
      '  a: { command: x, url: "http://h" }',
      '  b: { url: "ftp://h", alias: a }',
      '  c: { type: http, headers: { A: "${MISSING}" } }',
      '  C: { command: x }',
    ].join('\n');
    expect(problemsOf(yaml)).toEqual([
      { path: 'mcpServers.c.headers.A', reason: 'environment variable MISSING is not set' },
      { path: 'listen.port', reason: 'must be an integer from 0 to 65535' },
      { path: 'separator', reason: 'must be 1 to 4 of A-Z a-z 0-9 _ . -' },
      { path: 'timeouts.requestMs', reason: MS },
      { path: 'mcpServers.b.url', reason: 'must be an http(s) URL' },
      { path: 'mcpServers.C', reason: 'differs from server "c" only by case' },
      { path: 'mcpServers.b.alias', reason: 'is the name of server "a"' },
      { path: 'mcpServers.a.url', reason: 'is not allowed on a stdio server' },
      { path: 'mcpServers.c.url', reason: 'is required for an http server' },
    ]);
  });
});
