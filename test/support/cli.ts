import { spawn, spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import { SWITCHBOARD_BIN } from './daemon.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** What the CLI reads on stdin; without it, stdin is at its end at once. */
  input?: string;
  /** Set on top of this process's environment. */
  env?: Record<string, string>;
  /** The CLI resolves relative paths from here (the test's directory by default). */
  cwd?: string;
  /** It is killed after this long (code null); 30 s by default. */
  timeoutMs?: number;
  /** Run as this user (this process must be root to give one); as this process's user by default. */
  user?: { uid: number; gid: number };
}

/**
 * Runs the real CLI (`switchboard <args>`) to its end. It blocks this process, so nothing the
 * CLI needs may be served by the test itself (the daemon is a process of its own and may).
 */
export function runCli(args: string[], options: CliOptions = {}): CliRun {
  const { input, env, cwd, timeoutMs = 30_000, user } = options;
  const r = spawnSync(process.execPath, [SWITCHBOARD_BIN, ...args], {
    encoding: 'utf8',
    timeout: timeoutMs,
    input,
    cwd,
    env: env ? { ...process.env, ...env } : undefined,
    ...user,
  });
  if (r.error && r.status === null && r.signal === null) throw r.error; // not started at all (EPERM for another user)
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs the real CLI without blocking this process, for a command that must run while the
 * test itself keeps a daemon busy (calls from its hosts). Resolves when it exits.
 */
export function runCliInBackground(args: string[]): Promise<CliRun> {
  const child = spawn(process.execPath, [SWITCHBOARD_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The timeout of a test that runs the CLI `runs` times, one after another. Each run is a Node
 * process that needs about 0.5 s of CPU to start (0.6-0.8 s a run here when the machine is
 * idle); on a loaded 2-core machine (load average ~17) a dozen runs went past the 60 s
 * default, about 5 s a run. 10 s a run, and never less than the default.
 */
export function cliRunsTimeout(runs: number): number {
  return Math.max(60_000, runs * 10_000);
}

/**
 * Creates an API key named `name` (with `roles`, comma-separated, if given) with
 * `switchboard keys create`; returns the key, which is printed last.
 */
export function createKey(configPath: string, name: string, roles?: string): string {
  const made = runCli(['keys', 'create', '--config', configPath, '--name', name, ...(roles ? ['--roles', roles] : [])]);
  expect(made.code, made.stderr).toBe(0);
  return made.stdout.trimEnd().split('\n').at(-1)!;
}
