import { spawn, type ChildProcess } from 'node:child_process';
import { LineSplitter, LineWriter, type JsonRpcMessage } from '@switchboard/core';
import type { StdioServerConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import { inheritedEnvironment } from './inherited-env.js';
import { registerChildGroup, unregisterChildGroup } from './child-reaper.js';
import { keepResultText } from './keep-result-text.js';
import type { UpstreamTransport } from './upstream-transport.js';

const GRACE_MS = 2000;

/**
 * The stdio upstream transport. Our own rather than the SDK's because the gateway must own
 * the child's whole life:
 * - the child runs in its own process group, so shutdown reaches whatever it spawned (npx);
 * - the group is registered with the child reaper, which kills it should the daemon die
 *   without shutting down (SIGKILL): no orphans;
 * - shutdown is stdin close, then SIGTERM, then SIGKILL, each after a grace period;
 * - stderr goes to the log, line by line, labelled with the server;
 * - lines are parsed with JSON.parse only: the relay does not need schema validation of
 *   every message on the hot path; long results also keep their text (keepResultText).
 */
export class StdioUpstreamTransport implements UpstreamTransport {
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private child?: ChildProcess;
  private readonly lines = new LineSplitter();
  private readonly writer = new LineWriter((text, done) => {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) return done(new Error('stdio upstream is not running'));
    stdin.write(text, done);
  });
  private exited?: Promise<void>;
  private closed = false;
  private exitStatus?: string;

  constructor(
    private readonly config: StdioServerConfig,
    private readonly logger: Logger,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    const { command, args, env, cwd } = this.config;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        cwd,
        env: { ...inheritedEnvironment(), ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        windowsHide: true,
      });
      this.child = child;
      this.exited = new Promise((done) => child.once('exit', () => done()));
      child.once('error', (err) => {
        // ENOENT and friends arrive here instead of as an exit.
        this.onerror?.(err);
        reject(err);
        this.finish();
      });
      child.once('spawn', () => {
        registerChildGroup(child.pid!);
        resolve();
      });
      child.once('exit', (code, signal) => {
        unregisterChildGroup(child.pid!);
        this.exitStatus = signal ? `the process was killed by ${signal}` : `the process exited with code ${code}`;
        if (!this.closed) this.logger.warn({ code, signal }, 'upstream process exited');
        this.finish();
      });
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => this.onStdout(chunk));
      child.stdin!.on('error', () => undefined); // EPIPE after the child died; exit handles it
      this.pipeStderr(child);
    });
  }

  closeReason(): string | undefined {
    return this.exitStatus;
  }

  send(message: JsonRpcMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || this.closed) return Promise.reject(new Error('stdio upstream is not running'));
    return this.writer.push(JSON.stringify(message));
  }

  /** stdin close, then SIGTERM to the group, then SIGKILL; resolves when the child is gone. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.closed) return;
    this.closed = true;
    if (child.exitCode !== null || child.signalCode !== null) return this.finish();
    child.stdin?.end();
    if (await this.waitExit(GRACE_MS)) return;
    this.signalGroup('SIGTERM');
    if (await this.waitExit(GRACE_MS)) return;
    this.signalGroup('SIGKILL');
    await this.waitExit(GRACE_MS);
  }

  private onStdout(chunk: string): void {
    this.lines.push(chunk, (line) => {
      let message: JsonRpcMessage;
      try {
        message = JSON.parse(line) as JsonRpcMessage;
      } catch {
        this.logger.warn({ line: line.slice(0, 200) }, 'upstream wrote a line that is not JSON to stdout');
        return;
      }
      keepResultText(message, line);
      this.onmessage?.(message);
    });
  }

  private pipeStderr(child: ChildProcess): void {
    let pending = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.logger.info({ stderr: line }, 'upstream stderr');
    });
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        this.child?.kill(signal);
      } catch {
        /* already gone */
      }
    }
  }

  private async waitExit(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
    const done = await Promise.race([this.exited!.then(() => true as const), timeout]);
    clearTimeout(timer);
    return done;
  }

  private finish(): void {
    const cb = this.onclose;
    this.onclose = undefined;
    this.closed = true;
    cb?.();
  }
}
