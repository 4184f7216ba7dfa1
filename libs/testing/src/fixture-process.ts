import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type FixtureKind = 'stdio' | 'http' | 'sse';

const ENTRYPOINTS: Record<FixtureKind, string> = {
  stdio: 'stdio-server.js',
  http: 'http-server.js',
  sse: 'sse-server.js',
};

/**
 * Absolute path of a built fixture entrypoint. This module sits directly in
 * src/ when vitest runs it and in dist/ once built; both are children of
 * libs/testing, so ../dist/fixtures names the built file from either.
 */
export function fixturePath(kind: FixtureKind): string {
  return fileURLToPath(new URL(`../dist/fixtures/${ENTRYPOINTS[kind]}`, import.meta.url));
}

/** Throws a message saying how to build the fixtures when they are missing. */
export function assertFixturesBuilt(): void {
  for (const kind of Object.keys(ENTRYPOINTS) as FixtureKind[]) {
    const path = fixturePath(kind);
    if (!existsSync(path)) throw new Error(`Fixture ${path} is not built: run "npx tsc -b libs/testing" first`);
  }
}

/**
 * Absolute path of the built bulk fixture (dist/bulk/bulk-stdio.js): a stdio upstream that
 * lists as many tools and resources as its BULK_* variables ask for (bulk/bulk-lists.ts).
 */
export function bulkFixturePath(): string {
  return fileURLToPath(new URL('../dist/bulk/bulk-stdio.js', import.meta.url));
}

export interface FixtureExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface HttpFixture {
  /** http://127.0.0.1:<port>/mcp (http; https with FIXTURE_TLS=1) or http://127.0.0.1:<port>/sse (sse). */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Settles when the process ends, for whatever reason (crash tests await it). */
  readonly exited: Promise<FixtureExit>;
  /** Everything the fixture wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM (SIGKILL after 5 s) and wait for the exit. */
  stop(): Promise<void>;
}

export interface StartHttpFixtureOptions {
  /** How long to wait for `LISTENING <port>`; default 15 s. */
  readonly timeoutMs?: number;
}

const MAX_STDERR_CHARS = 64 * 1024;
const live = new Set<ChildProcess>();
let reaperInstalled = false;

/**
 * Spawns a built HTTP fixture on an ephemeral port and resolves once it
 * printed `LISTENING <port>`. `env` (FIXTURE_*, PORT) is added to the
 * inherited environment. A fixture that exits or stays silent rejects with
 * its stderr.
 */
export async function startHttpFixture(
  kind: 'http' | 'sse',
  env: Record<string, string> = {},
  options: StartHttpFixtureOptions = {},
): Promise<HttpFixture> {
  return startListeningFixture(fixturePath(kind), kind, kind === 'http' ? 'mcp' : 'sse', env, options);
}

export type ConformanceFixtureKind = 'stdio' | 'http';

/**
 * Absolute path of a built entrypoint of the conformance fixture (the server
 * the official MCP conformance suite expects), in dist/conformance.
 */
export function conformanceFixturePath(kind: ConformanceFixtureKind): string {
  return fileURLToPath(new URL(`../dist/conformance/conformance-${kind}.js`, import.meta.url));
}

/** Spawns the conformance fixture over Streamable HTTP on an ephemeral port; its url ends in /mcp. */
export async function startConformanceHttpFixture(
  env: Record<string, string> = {},
  options: StartHttpFixtureOptions = {},
): Promise<HttpFixture> {
  return startListeningFixture(conformanceFixturePath('http'), 'conformance http', 'mcp', env, options);
}

async function startListeningFixture(
  path: string,
  kind: string,
  urlPath: string,
  env: Record<string, string>,
  options: StartHttpFixtureOptions,
): Promise<HttpFixture> {
  if (!existsSync(path)) throw new Error(`Fixture ${path} is not built: run "npx tsc -b libs/testing" first`);
  installReaper();

  const child = spawn(process.execPath, [path], {
    env: { ...inheritedEnv(), PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let stderr = '';
  // Keep draining both pipes for the child's whole life: a full pipe would block it.
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-MAX_STDERR_CHARS);
  });
  // 'close', not 'exit': it waits for stderr to drain, so failures quote all of it.
  const exited = new Promise<FixtureExit>((resolve) => {
    child.once('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });

  const port = await new Promise<number>((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 15_000;
    let settled = false;
    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${kind} fixture (${path}) ${reason}; stderr:\n${stderr || '(empty)'}`));
    };
    const timer = setTimeout(() => fail(`printed no LISTENING line within ${timeoutMs} ms`), timeoutMs);
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /^LISTENING (\d+)$/m.exec(stdout);
      if (match && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('error', (error) => fail(`could not be spawned: ${error.message}`));
    void exited.then(({ code, signal }) => fail(`exited before listening (code ${code}, signal ${signal})`));
  });

  return {
    url: `${['1', 'true'].includes(env['FIXTURE_TLS'] ?? '') ? 'https' : 'http'}://127.0.0.1:${port}/${urlPath}`,
    port,
    pid: child.pid!,
    exited,
    stderr: () => stderr,
    stop: () => stopChild(child, exited),
  };
}

/** The test process's environment minus FIXTURE_* and PORT, so only `env` shapes the fixture. */
function inheritedEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('FIXTURE_') && key !== 'PORT'),
  );
}

async function stopChild(child: ChildProcess, exited: Promise<FixtureExit>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(killer);
}

/** A test run that dies without calling stop() must not leave servers behind. */
function installReaper(): void {
  if (reaperInstalled) return;
  reaperInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}
