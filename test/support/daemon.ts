import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixturePath } from '@switchboard/testing';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SWITCHBOARD_BIN = join(REPO_ROOT, 'bin', 'switchboard.js');
export const EVERYTHING_SERVER = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

type Json = Record<string, unknown>;

/** A config entry that runs the stdio fixture as an upstream. */
export function stdioFixture(env: Record<string, string> = {}, extra: Json = {}): Json {
  return { command: process.execPath, args: [fixturePath('stdio')], env, ...extra };
}

/** A fresh directory for one test's config and data. */
export function tempDir(prefix = 'sb-e2e-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes a config (JSON is YAML too) with an ephemeral port and a private data dir. */
export function writeConfig(config: Json, dir = tempDir()): string {
  const file = join(dir, 'switchboard.json');
  const full = { listen: { host: '127.0.0.1', port: 0 }, dataDir: join(dir, 'data'), log: { level: 'warn' }, ...config };
  writeFileSync(file, JSON.stringify(full, null, 2));
  return file;
}

export interface DaemonHandle {
  baseUrl: string;
  mcpUrl: string;
  sseUrl: string;
  configPath: string;
  proc: ChildProcess;
  /** Everything the daemon has logged so far that this process has read. */
  stderr(): string;
  /**
   * The first log line that matches, waiting for it. The daemon's log is written asynchronously
   * and read through its own pipe, so a line can arrive after an answer, a stream's end or a
   * database row that came later in the daemon: never read the log at once after those.
   */
  waitForLog(match: RegExp | ((line: string) => boolean), timeoutMs?: number, what?: string): Promise<string>;
  /** Sends the signal and resolves with how the process ended, once its log is read to the end. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<DaemonHandle>();
// A test file that forgets stopAllDaemons would leave its daemons running after the test
// worker exits (and skew whatever runs next on the machine): they go with the worker.
process.once('exit', () => {
  for (const daemon of running) daemon.proc.kill('SIGKILL');
});

/** Starts the real daemon (`switchboard start`) on an ephemeral port and waits for it to listen. */
export async function startDaemon(
  config: Json | string,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<DaemonHandle> {
  const configPath = typeof config === 'string' ? config : writeConfig(config);
  const proc = spawn(process.execPath, [SWITCHBOARD_BIN, 'start', '--config', configPath, '--port', '0', ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  // 'close', not 'exit': at 'exit' the last of stdout and stderr may still be unread.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('close', (code, signal) => resolve({ code, signal })),
  );
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start within 30 s\n${stderr}`)), 30_000);
    proc.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
      const m = /listening on (http:\/\/[^\s]+)\/mcp/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited with ${code} before listening\n${stderr}`));
    });
  });
  const handle: DaemonHandle = {
    baseUrl,
    mcpUrl: `${baseUrl}/mcp`,
    sseUrl: `${baseUrl}/sse`,
    configPath,
    proc,
    stderr: () => stderr,
    waitForLog: (match, timeoutMs = 15_000, what = `a log line matching ${String(match)}`) =>
      eventually(() => stderr.split('\n').find((line) => (typeof match === 'function' ? match(line) : match.test(line))), timeoutMs, what),
    stop: async (signal = 'SIGTERM') => {
      running.delete(handle);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
  running.add(handle);
  return handle;
}

/**
 * The daemon's log entries (pino's JSON lines on its stderr) whose message is `msg`, oldest
 * first: the lines read so far (see waitForLog for why a line can come late).
 */
export function logEntries(daemon: Pick<DaemonHandle, 'stderr'>, msg: string): Json[] {
  return daemon
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Json)
    .filter((entry) => entry.msg === msg);
}

/** For afterAll/afterEach: stops whatever a test left running. */
export async function stopAllDaemons(): Promise<void> {
  await Promise.all([...running].map((d) => d.stop('SIGTERM')));
}

/** Polls until `check` returns a truthy value (for effects with no event to await). */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 15_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A TCP port free on 127.0.0.1 just now, for an upstream a test starts itself. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** server-everything over Streamable HTTP on a free port, once it listens: its process and MCP URL. */
export async function everythingOverHttp(): Promise<{ proc: ChildProcess; url: string }> {
  const port = await freePort();
  const proc = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  await eventually(() => stderr.includes('listening on port'), 15_000, 'server-everything over HTTP');
  return { proc, url: `http://127.0.0.1:${port}/mcp` };
}
