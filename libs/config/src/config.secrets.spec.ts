import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from './config.errors.js';
import { loadConfig } from './config.loader.js';
import { MissingSecretsError, UnusableSecretError, secretNamesOf, withSecrets } from './config.secrets.js';
import type { RemoteServerConfig, StdioServerConfig } from './config.types.js';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'sb-secrets-config-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const load = (yaml: string, env: NodeJS.ProcessEnv = {}) => {
  const file = join(dir, 'gw.yaml');
  writeFileSync(file, yaml);
  return loadConfig(file, env);
};

const problemsOf = (yaml: string): string[] => {
  try {
    load(yaml);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.path}: ${p.reason}`);
    throw err;
  }
  throw new Error('the file was accepted');
};

describe('${secret:NAME} in a per-principal server', () => {
  it('is kept for the connection to fill in, in env and headers', () => {
    const config = load(
      [
        'mcpServers:',
        '  gh:',
        '    url: https://example.test/mcp',
        '    isolation: per-principal',
        '    headers: { Authorization: "Bearer ${secret:GH_TOKEN}", X-Org: "${ORG}" }',
        '  local:',
        '    command: node',
        '    isolation: per-principal',
        '    env: { TOKEN: "${secret:LOCAL_TOKEN}", BOTH: "${secret:A}-${secret:B}", LITERAL: "$${secret:A}" }',
      ].join('\n'),
      { ORG: 'acme' },
    );
    const [gh, local] = config.servers as [RemoteServerConfig, StdioServerConfig];
    expect(gh.isolation).toBe('per-principal');
    expect(secretNamesOf(gh)).toEqual(['GH_TOKEN']);
    expect(secretNamesOf(local)).toEqual(['A', 'B', 'LOCAL_TOKEN']);
    expect((withSecrets(gh, { GH_TOKEN: 'tok-1' }) as RemoteServerConfig).headers).toEqual({ Authorization: 'Bearer tok-1', 'X-Org': 'acme' });
    const filled = withSecrets(local, { LOCAL_TOKEN: 't', A: 'a', B: 'b' }) as StdioServerConfig;
    // A literal $${secret:A} stays text: only references are filled.
    expect(filled.env).toEqual({ TOKEN: 't', BOTH: 'a-b', LITERAL: '${secret:A}' });
    expect(local.env.TOKEN).not.toBe('t'); // the loaded config itself is unchanged
  });

  it('names every secret a principal lacks', () => {
    const config = load('mcpServers:\n  s:\n    command: node\n    isolation: per-principal\n    env: { X: "${secret:ONE}${secret:TWO}" }\n');
    const error = (() => {
      try {
        withSecrets(config.servers[0], { TWO: '2' });
      } catch (err) {
        return err;
      }
    })();
    expect(error).toBeInstanceOf(MissingSecretsError);
    expect((error as MissingSecretsError).missing).toEqual(['ONE']);
  });

  it('refuses a value no environment or header can carry, naming the secret and why, never the value', () => {
    const config = load(
      [
        'mcpServers:',
        '  local: { command: node, isolation: per-principal, env: { TOKEN: "${secret:TOKEN}" } }',
        '  gh: { url: "https://example.test/mcp", isolation: per-principal, headers: { Authorization: "Bearer ${secret:GH}" } }',
      ].join('\n'),
    );
    const [local, gh] = config.servers;
    const refusal = (server: (typeof config.servers)[number], values: Record<string, string>) => {
      try {
        withSecrets(server, values);
      } catch (err) {
        return err as Error;
      }
      return undefined;
    };
    const nul = refusal(local, { TOKEN: 's3cr3t\u0000x' });
    expect(nul).toBeInstanceOf(UnusableSecretError);
    expect(nul).toMatchObject({ server: 'local', secret: 'TOKEN', message: "server 'local' cannot use the secret TOKEN: it holds a NUL byte, which no environment variable can carry" });
    expect(nul!.message).not.toContain('s3cr3t');
    expect(refusal(gh, { GH: 'tok\r\nX-Evil: 1' })).toMatchObject({ secret: 'GH', message: "server 'gh' cannot use the secret GH: it holds a line break, which no HTTP header can carry" });
    // A multi-line value is fine in an environment variable (a PEM key, say).
    expect(refusal(local, { TOKEN: 'line 1\nline 2' })).toBeUndefined();
  });

  it('defaults to shared isolation, where secrets are refused', () => {
    expect(load('mcpServers:\n  s:\n    command: node\n').servers[0].isolation).toBe('shared');
    expect(problemsOf('mcpServers:\n  s:\n    command: node\n    env: { X: "${secret:T}" }\n')).toEqual([
      'mcpServers.s.env.X: "${secret:T}" needs isolation: per-principal (a secret belongs to the principal making the call)',
    ]);
  });

  it('is refused on a per-session server too: a session is not whose secret it would be', () => {
    expect(problemsOf('mcpServers:\n  s:\n    command: node\n    isolation: per-session\n    env: { X: "${secret:T}" }\n')).toEqual([
      'mcpServers.s.env.X: "${secret:T}" needs isolation: per-principal (a secret belongs to the principal making the call)',
    ]);
  });

  it('is refused in args, url, command and cwd, and with a bad name, each reported', () => {
    const problems = problemsOf(
      [
        'mcpServers:',
        '  s:',
        '    command: "${secret:C}"',
        '    isolation: per-principal',
        '    args: ["--token", "${secret:T}"]',
        '    env: { X: "${secret:9bad}" }',
        '  r:',
        '    url: "https://example.test/${secret:U}"',
        '    isolation: per-principal',
      ].join('\n'),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^mcpServers\.s\.command: .*cannot be used in command/),
        expect.stringMatching(/^mcpServers\.s\.args\.1: .*cannot be used in args/),
        expect.stringMatching(/^mcpServers\.s\.env\.X: .*a secret name is 1 to 64/),
        expect.stringMatching(/^mcpServers\.r\.url: .*cannot be used in url/),
      ]),
    );
  });
});
