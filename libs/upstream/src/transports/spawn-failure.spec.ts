import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnFailure } from './spawn-failure.js';

const dir = mkdtempSync(join(tmpdir(), 'sb-spawn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const failed = (code: string) => Object.assign(new Error(`spawn x ${code}`), { code });
const reason = (command: string, cwd?: string, code = 'ENOENT', platform: NodeJS.Platform = 'linux') =>
  spawnFailure(failed(code), command, cwd, platform, '/srv/daemon').message;

describe('spawnFailure', () => {
  it('says where a command that does not start was looked for, instead of "spawn X ENOENT"', () => {
    expect(reason('uvx')).toBe('cannot start command "uvx": not found on PATH');
    expect(reason('./bin/server', dir)).toBe(`cannot start command "./bin/server": not found relative to ${dir} (cwd is relative to the config file)`);
    expect(reason('./bin/server')).toBe(
      'cannot start command "./bin/server": not found relative to /srv/daemon, the daemon\'s working directory (the server has no cwd: set one, relative to the config file, or write an absolute path)',
    );
    expect(reason('/opt/mcp/server')).toBe('cannot start command "/opt/mcp/server": not found');
    expect(reason('server', join(dir, 'missing'))).toBe(
      `cannot start command "server": its working directory ${join(dir, 'missing')} does not exist (cwd is relative to the config file)`,
    );
    expect(reason('./server.sh', dir, 'EACCES')).toBe('cannot start command "./server.sh": not executable (permission denied)');
  });

  it('names a Windows command (npx.cmd) copied from a Windows config, except on Windows', () => {
    expect(reason('npx.cmd')).toBe('cannot start command "npx.cmd": not found on PATH; "npx.cmd" is a Windows name: on this system write it without the extension');
    expect(reason('npx.cmd', undefined, 'ENOENT', 'win32')).toBe('cannot start command "npx.cmd": not found on PATH');
  });

  it('keeps the code, and passes other errors on unchanged', () => {
    expect(spawnFailure(failed('ENOENT'), 'x', undefined)).toMatchObject({ code: 'ENOENT' });
    const other = failed('EMFILE');
    expect(spawnFailure(other, 'x', undefined)).toBe(other);
  });
});
