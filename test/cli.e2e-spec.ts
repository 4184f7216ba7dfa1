import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SWITCHBOARD_BIN, tempDir, writeConfig } from './support/daemon.js';

/** The command line is a contract other tooling relies on: usage, exit codes, refusals. */
function run(args: string[]) {
  const r = spawnSync(process.execPath, [SWITCHBOARD_BIN, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('switchboard CLI', () => {
  it('--help prints usage and exits 0; no command is a usage error (2)', () => {
    const help = run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/switchboard start \[--config FILE\] \[--port N\] \[--host ADDR\]/);
    expect(help.stdout).toMatch(/switchboard stdio/);
    expect(run([]).code).toBe(2);
    expect(run(['frobnicate']).code).toBe(2);
  });

  it('--version prints the package version', () => {
    expect(run(['--version']).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('refuses an invalid config at start with every problem listed (file, path, reason), exit 2', () => {
    const dir = tempDir();
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      [
        'listen: { port: 99999 }',
        'namespace: sometimes',
        'mcpServers:',
        '  a: { args: [x] }',
        '  b: { type: http, url: "ftp://nope" }',
        '  c: { command: node, env: { K: "${env:SWITCHBOARD_TEST_UNSET_VAR}" } }',
      ].join('\n'),
    );
    const r = run(['start', '--config', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(file);
    for (const path of ['listen.port', 'namespace', 'mcpServers.a', 'mcpServers.b.url', 'mcpServers.c.env.K']) {
      expect(r.stderr).toContain(path);
    }
  });

  it('a missing config file is a clear error, exit 2', () => {
    const r = run(['start', '--config', '/nonexistent/switchboard.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not found/);
  });

  it('bad --port is a usage error', () => {
    expect(run(['start', '--port', 'eighty', '--config', writeConfig({ mcpServers: {} })]).code).toBe(2);
  });

  it('refuses to listen off loopback with auth.mode: none (the default), exit 1', () => {
    const r = run(['start', '--host', '0.0.0.0', '--config', writeConfig({ mcpServers: {} })]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/auth\.mode: none.*loopback/);
  });
});
