import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/**
 * A process the bench started: output drained (a full pipe would stall it mid-run),
 * the tail of stderr kept for error messages, and registered so that it is killed
 * however the bench ends.
 */
export class ManagedProcess {
  private static readonly live = new Set<ManagedProcess>();
  /** Set once the bench is shutting down: a scenario still running must not start anything new. */
  private static closed = false;
  private stderr = '';
  private exited = false;
  private readonly exit: Promise<void>;

  private constructor(
    readonly label: string,
    readonly child: ChildProcessWithoutNullStreams,
  ) {
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-4000);
    });
    this.exit = new Promise((resolve) => {
      child.once('exit', () => {
        this.exited = true;
        ManagedProcess.live.delete(this);
        resolve();
      });
      // A spawn failure emits error and no exit.
      child.once('error', () => {
        this.exited = true;
        ManagedProcess.live.delete(this);
        resolve();
      });
    });
    ManagedProcess.live.add(this);
  }

  static start(label: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): ManagedProcess {
    if (ManagedProcess.closed) throw new Error(`not starting ${label}: the bench is stopping`);
    return new ManagedProcess(label, spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error(`${this.label} did not start: ${this.stderrTail()}`);
    return this.child.pid;
  }

  get running(): boolean {
    return !this.exited;
  }

  stderrTail(): string {
    return this.stderr.trim().split('\n').slice(-8).join('\n');
  }

  /**
   * Resolves with the match of the first stdout line matching pattern; afterwards
   * stdout is drained and discarded. Rejects if the process exits or times out first.
   */
  waitForStdoutLine(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      let buffered = '';
      const cleanup = () => {
        clearTimeout(timer);
        this.child.off('exit', onExit);
      };
      const onData = (chunk: string) => {
        // Only complete lines: a port number may arrive split across chunks.
        const lines = (buffered + chunk).split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          const match = pattern.exec(line);
          if (match) {
            cleanup();
            this.child.stdout.off('data', onData);
            this.child.stdout.on('data', () => undefined);
            return resolve(match);
          }
        }
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new Error(`${this.label} exited (code ${code}) before announcing itself:\n${this.stderrTail()}`));
      };
      const timer = setTimeout(() => {
        this.child.off('exit', onExit);
        reject(new Error(`${this.label} did not announce itself within ${timeoutMs} ms:\n${this.stderrTail()}`));
      }, timeoutMs);
      this.child.stdout.setEncoding('utf8');
      this.child.stdout.on('data', onData);
      this.child.once('exit', onExit);
    });
  }

  /** Drains stdout for a process whose stdout nobody reads. */
  discardStdout(): void {
    this.child.stdout.resume();
  }

  /** SIGTERM (a graceful stop lets a gateway stop its own children), SIGKILL after timeoutMs. */
  async stop(timeoutMs = 8_000): Promise<void> {
    if (this.exited) return;
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs);
    });
    const killed = await Promise.race([this.exit.then(() => false), timedOut]);
    clearTimeout(timer);
    if (killed) {
      process.stderr.write(`${this.label} ignored SIGTERM for ${timeoutMs} ms; killing it\n`);
      this.child.kill('SIGKILL');
      await this.exit;
    }
  }

  /** Last resort on process exit: SIGKILL whatever is still running (synchronous). */
  static killAll(): void {
    for (const managed of ManagedProcess.live) managed.child.kill('SIGKILL');
  }

  /** Stops everything and refuses further starts (interrupt). */
  static async shutDown(): Promise<void> {
    ManagedProcess.closed = true;
    await ManagedProcess.stopAll();
  }

  static async stopAll(): Promise<void> {
    await Promise.all([...ManagedProcess.live].map((managed) => managed.stop()));
  }
}
