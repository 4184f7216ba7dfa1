import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import { SWITCHBOARD_BIN } from './daemon.js';

/** Runs the real CLI (`switchboard <args>`) to its end. */
export function runCli(args: string[], input?: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SWITCHBOARD_BIN, ...args], { encoding: 'utf8', timeout: 30_000, input });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Creates an API key named `name` with `switchboard keys create`; returns the key, which is printed last. */
export function createKey(configPath: string, name: string): string {
  const made = runCli(['keys', 'create', '--config', configPath, '--name', name]);
  expect(made.code, made.stderr).toBe(0);
  return made.stdout.trimEnd().split('\n').at(-1)!;
}
