import { spawn, type ChildProcess } from 'node:child_process';
import { LineSplitter, LineWriter, type JsonRpcMessage, counted } from '@switchboard/core';
import type { StdioServerConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import { inheritedEnvironment } from './inherited-env.js';
import { spawnFailure } from './spawn-failure.js';
import { registerChildGroup, unregisterChildGroup } from './child-reaper.js';
import { endProcessGroup } from './process-group.js';
import { keepResultText } from './keep-result-text.js';
import { MAX_STRAY_LINES_PER_SECOND } from '../log-budget.js';
import { MAX_MESSAGE_CHARS } from './message-limit.js';
import { UpstreamMessageReader, type StrayLogging } from './message-reader.js';
import type { UpstreamTransport } from './upstream-transport.js';

const GRACE_MS = 2000;
/**
 * A write to a child that is exiting fails (EPIPE) a moment before its 'exit' is seen; this
 * long is waited for the exit, whose status says what happened far better.
 */
const EXIT_WAIT_MS = 1000;
/** stderr is for people: a longer line is logged cut to this many characters, with a marker. */
export const MAX_STDERR_LINE_CHARS = 8 * 1024;
/** And at most this many lines a second of it; the rest is counted, not logged. */
export const MAX_STDERR_LINES_PER_SECOND = 100;

/**
 * The stdio upstream transport. Our own rather than the SDK's because the gateway must own
 * the child's whole life:
 * - the child runs in its own process group, so shutdown reaches whatever it spawned (npx);
 * - the group is registered with the child reaper, which kills it should the daemon die
 *   without shutting down (SIGKILL): no orphans;
 * - shutdown is stdin close, then SIGTERM, then SIGKILL, each after a grace period;
 * - once the child has exited (stopped, or crashed), what is left of its group gets SIGTERM,
 *   then SIGKILL, and the group stays registered with the reaper until that is done;
 * - stderr goes to the log, line by line (cut to MAX_STDERR_LINE_CHARS), labelled with the server,
 *   with secrets redacted (`redactText`): servers print their arguments, tokens, headers;
 * - lines are parsed with JSON.parse and a shape check only: the relay does not need schema
 *   validation of every message on the hot path; long results also keep their text
 *   (keepResultText);
 * - a stdout line over MAX_MESSAGE_CHARS means a broken upstream: the connection is closed
 *   rather than the line held in memory;
 * - stdout's end while the child runs on is a lost connection, as its exit would be.
 */
export class StdioUpstreamTransport implements UpstreamTransport {
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private child?: ChildProcess;
  /** Checks each stdout line's value as JSON-RPC, answers or logs what is none (message-reader.ts). */
  private readonly reader: UpstreamMessageReader;
  private readonly lines = new LineSplitter({ maxLength: MAX_MESSAGE_CHARS, onOverflow: (length) => this.tooLong(length) });
  private readonly writer = new LineWriter((text, done) => {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) return done(new Error('stdio upstream is not running'));
    stdin.write(text, done);
  });
  private exited?: Promise<void>;
  /** Resolves once the rest of the child's process group is gone, after the child's exit. */
  private groupEnded?: Promise<void>;
  /** onclose has fired: nothing more is sent. */
  private closed = false;
  /** close() has begun (so the exit is expected), and resolves when the child is gone. */
  private closing?: Promise<void>;
  private exitStatus?: string;
  /** Why the gateway closed the connection itself, when it did. */
  private failure?: string;

  constructor(
    private readonly config: StdioServerConfig,
    private readonly logger: Logger,
    /** The gateway's own variables (the serving chain); last, so a server's env cannot drop them. */
    private readonly gatewayEnv: Readonly<Record<string, string>> = {},
    /** Hides secrets in what the child writes before it is logged (the app gives the audit log's). */
    private readonly redactText: (text: string) => string = (text) => text,
  ) {
    this.reader = new UpstreamMessageReader({
      logger,
      redactText,
      send: (refusal) => this.send(refusal),
      deliver: (message, json) => {
        if (json !== undefined) keepResultText(message, json);
        this.onmessage?.(message);
      },
      strays: STDOUT_STRAYS,
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    const { command, args, env, cwd } = this.config;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        cwd,
        env: { ...inheritedEnvironment(), ...env, ...this.gatewayEnv },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        windowsHide: true,
      });
      this.child = child;
      this.exited = new Promise((done) => child.once('exit', () => done()));
      child.once('error', (spawnError) => {
        // ENOENT and friends arrive here instead of as an exit.
        const err = spawnFailure(spawnError, command, cwd);
        this.onerror?.(err);
        reject(err);
        this.finish();
      });
      child.once('spawn', () => {
        registerChildGroup(child.pid!);
        resolve();
      });
      child.once('exit', (code, signal) => {
        const pgid = child.pid!;
        // Not unregistered yet: should the daemon die while the group is being stopped, the
        // reaper must still stop it. Unregistered once empty, as its number can then be reused.
        this.groupEnded = endProcessGroup(pgid, GRACE_MS).finally(() => unregisterChildGroup(pgid));
        this.exitStatus = signal ? `the process was killed by ${signal}` : `the process exited with code ${code}`;
        if (!this.closing) this.logger.warn({ code, signal }, 'upstream process exited');
        this.finish();
      });
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => this.lines.push(chunk, (line) => this.onLine(line)));
      child.stdout!.on('end', () => void this.stdoutEnded());
      // An 'error' nobody listens to would throw and end the daemon; the exit reports the loss.
      child.stdout!.on('error', () => undefined);
      child.stdin!.on('error', () => undefined); // EPIPE after the child died; exit handles it
      this.pipeStderr(child);
    });
  }

  closeReason(): string | undefined {
    return this.failure ?? this.exitStatus;
  }

  send(message: JsonRpcMessage): Promise<void> {
    if (!this.child || this.closed || this.closing) return Promise.reject(new Error(this.closeReason() ?? 'stdio upstream is not running'));
    return this.writer.push(JSON.stringify(message)).catch((err: Error) => this.writeFailed(err));
  }

  /**
   * stdin close, then SIGTERM to the group, then SIGKILL; resolves when the child and the
   * rest of its process group are gone.
   */
  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    // No pid: it never started (the 'error' event has finished it).
    if (child.pid === undefined) return this.finish();
    if (child.exitCode === null && child.signalCode === null) await this.stopLeader(child);
    else this.finish();
    await this.groupEnded;
  }

  private async stopLeader(child: ChildProcess): Promise<void> {
    child.stdin?.end();
    if (await this.waitExit(GRACE_MS)) return;
    this.signalGroup('SIGTERM');
    if (await this.waitExit(GRACE_MS)) return;
    this.signalGroup('SIGKILL');
    await this.waitExit(GRACE_MS);
  }

  /**
   * One stdout line. It runs inside the stream's 'data' handler, where an exception would be
   * uncaught and end the daemon: the reader logs whatever the line holds, or whatever
   * handling it throws. A batch (JSON-RPC's; of MCP's revisions only 2025-03-26 has them) is
   * taken message by message, as an HTTP upstream's.
   */
  private onLine(line: string): void {
    const value = parsedLine(line);
    if (value === NOT_A_MESSAGE) this.reader.readNotJson(line);
    else this.reader.readValue(value, line);
  }

  /**
   * A stdout line over MAX_MESSAGE_CHARS: the upstream is broken. Its size is logged (never
   * its content), calls in flight fail now (onclose), and the child is stopped; the
   * connection's backoff decides when to start it again.
   */
  private tooLong(length: number): void {
    if (this.failure) return;
    this.failure = `it wrote a line over the limit of ${MAX_MESSAGE_CHARS} characters to stdout`;
    this.logger.error({ chars: length, limit: MAX_MESSAGE_CHARS }, 'upstream wrote a message over the size limit; closing the connection');
    // Reading the rest only to drop it is wasted work; a child still writing gets EPIPE.
    this.child?.stdout?.destroy();
    void this.close();
    this.finish();
  }

  /**
   * stdout reached its end. Usually the child is exiting, and its exit status says why (it is
   * waited for, briefly, as for a failed write). A child that lives on with its stdout closed
   * can never answer again: calls in flight would wait for their timeout and the connection
   * would look up until the next ping timed out. So that is a lost connection like a crash:
   * calls in flight fail now (onclose), the child's process group is stopped, and the
   * connection's backoff decides when to start it again.
   */
  private async stdoutEnded(): Promise<void> {
    if (await this.waitExit(EXIT_WAIT_MS)) return;
    if (this.failure || this.closing || this.closed) return;
    this.failure = 'it closed its stdout while still running';
    this.logger.error('upstream closed its stdout while still running; closing the connection');
    void this.close();
    this.finish();
  }

  /**
   * A write failed. If that is because the child is exiting, its exit status is the error to
   * report (a crash-looping upstream should read "exited with code 1", not "write EPIPE"), so
   * it is waited for, briefly: the exit usually follows the failed write within milliseconds.
   */
  private async writeFailed(err: Error): Promise<never> {
    if (this.exitStatus === undefined && this.exited) await this.waitExit(EXIT_WAIT_MS);
    throw this.exitStatus === undefined ? err : new Error(this.exitStatus);
  }

  /**
   * stderr to the log line by line, holding at most MAX_STDERR_LINE_CHARS of a line, and at
   * most MAX_STDERR_LINES_PER_SECOND lines a second: an upstream that floods stderr must not
   * fill the disk with the log or the memory with its buffer. What is left out is counted.
   */
  private pipeStderr(child: ChildProcess): void {
    let kept = '';
    let length = 0;
    let windowStart = 0;
    let logged = 0;
    let skipped = 0;
    const reportSkipped = () => {
      if (skipped > 0) this.logger.warn({ skipped }, `upstream stderr: ${counted(skipped, 'line')} not logged (over ${MAX_STDERR_LINES_PER_SECOND} a second)`);
      skipped = 0;
    };
    const take = (chunk: string, from: number, to: number) => {
      if (kept.length < MAX_STDERR_LINE_CHARS) kept += chunk.slice(from, Math.min(to, from + MAX_STDERR_LINE_CHARS - kept.length));
      length += to - from;
    };
    const flush = () => {
      const cut = length - kept.length;
      if (kept.trim()) {
        const now = Date.now();
        if (now - windowStart >= 1000) {
          reportSkipped();
          windowStart = now;
          logged = 0;
        }
        if (logged++ >= MAX_STDERR_LINES_PER_SECOND) {
          skipped++;
        } else {
          const text = this.redactText(kept);
          this.logger.info({ stderr: cut > 0 ? `${text}… [${cut} more characters]` : text }, 'upstream stderr');
        }
      }
      kept = '';
      length = 0;
    };
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      let start = 0;
      let nl: number;
      while ((nl = chunk.indexOf('\n', start)) !== -1) {
        take(chunk, start, nl);
        flush();
        start = nl + 1;
      }
      take(chunk, start, chunk.length);
    });
    // A last line without a newline is often the one that says why the process died.
    child.stderr!.on('end', () => {
      flush();
      reportSkipped();
    });
    child.stderr!.on('error', () => undefined);
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
    this.reader.stop();
    const cb = this.onclose;
    this.onclose = undefined;
    this.closed = true;
    cb?.();
  }
}

const STRAY_LINE = 'upstream wrote something that is not a JSON-RPC message to stdout';
/** A stray stdout line is logged whole (its start), under one message whatever is wrong with it. */
const STDOUT_STRAYS: StrayLogging = {
  notJson: { field: 'line', message: STRAY_LINE },
  notMessage: { field: 'line', message: STRAY_LINE },
  skipped: (count) => `upstream stdout: ${counted(count, 'stray line')} not logged (over ${MAX_STRAY_LINES_PER_SECOND} a second)`,
  logWholeRead: true,
  emptyBatchIsStray: true,
};
const NOT_A_MESSAGE = Symbol('not a message');

/**
 * A stdout line's JSON value, or NOT_A_MESSAGE for one that is no JSON object or array (so
 * no message, nor a batch). The lines of a server that logs to stdout are told apart so
 * without a failed parse, which costs an exception each: at 100,000 lines a second, most
 * of a core.
 */
function parsedLine(line: string): unknown {
  const first = line.charCodeAt(0); // lines are trimmed
  if (first !== 0x7b && first !== 0x5b) return NOT_A_MESSAGE;
  try {
    return JSON.parse(line);
  } catch {
    return NOT_A_MESSAGE;
  }
}
