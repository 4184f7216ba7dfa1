import { counted } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';

type StopHandler = (signal: NodeJS.Signals) => void;

/**
 * SIGTERM and SIGINT, caught from the first moment of the start-up of the daemon and of
 * `switchboard stdio`: the command line installs them before it reads the config (cli.ts),
 * and the daemon or stdio mode hands them its logger (`logTo`) once it has one. A process with no listener for them meets the signal's default action:
 * killed, nothing drained, the audit log's last rows not committed. A supervisor may signal at
 * any time, also the instant it reads the listening line, as may a host that launched stdio
 * mode, so the listeners go in before anything else and stay.
 *
 * Until the process has everything its shutdown closes, a signal is held, and acted on once
 * it has (`handleWith`); a second signal during start-up means "now" (exit 1), as a second
 * Ctrl-C does while draining.
 *
 * SIGHUP, whose default action kills the process just as abruptly, is caught too. For
 * `switchboard stdio`, and a daemon run from a terminal, it is a stop signal like the others
 * (the host or the terminal is gone). For a daemon run as a service it means "read your
 * files again" (`onHangup`), as service managers (systemd's ExecReload) and operators expect
 * of a daemon; during start-up it is logged and otherwise ignored, as start-up reads them.
 */
export class ShutdownSignals {
  private handler?: StopHandler;
  private hangupHandler?: () => void;
  private held?: NodeJS.Signals;
  private logger?: Logger;
  private readonly listener = (signal: NodeJS.Signals) => this.receive(signal);
  private readonly hangupListener = () => this.hangup();

  /** `hangupMeans`: what SIGHUP means to this process: stop, or reload its files (`onHangup`). */
  constructor(private readonly hangupMeans: 'stop' | 'reload' = 'stop') {
    process.on('SIGTERM', this.listener);
    process.on('SIGINT', this.listener);
    process.on('SIGHUP', hangupMeans === 'stop' ? this.listener : this.hangupListener);
  }

  /** From now on SIGHUP runs `reload` (with `hangupMeans` 'reload'). */
  onHangup(reload: () => void): void {
    this.hangupHandler = reload;
  }

  /** The signal held so far, if one came: the command line then starts nothing at all. */
  get pending(): NodeJS.Signals | undefined {
    return this.held;
  }

  /** The log for what follows; a signal held before there was one is logged now. */
  logTo(logger: Logger): void {
    this.logger = logger;
    if (this.held !== undefined) this.logHeld(this.held);
  }

  /**
   * From now on a signal runs `stop`. A signal held during start-up runs it at once: then
   * this returns true, and the caller announces nothing and starts nothing more.
   */
  handleWith(stop: StopHandler): boolean {
    this.handler = stop;
    if (this.held === undefined) return false;
    stop(this.held);
    return true;
  }

  /** Start-up failed and the caller ends the process itself: the signals' default action is back. */
  release(): void {
    process.off('SIGTERM', this.listener);
    process.off('SIGINT', this.listener);
    process.off('SIGHUP', this.hangupMeans === 'stop' ? this.listener : this.hangupListener);
  }

  private hangup(): void {
    if (this.hangupHandler) return this.hangupHandler();
    const message = 'SIGHUP during start-up: ignored (start-up reads the config and policy files)';
    if (this.logger) this.logger.info({ signal: 'SIGHUP' }, message);
    else process.stderr.write(`switchboard: ${message}\n`);
  }

  private receive(signal: NodeJS.Signals): void {
    if (this.handler) return this.handler(signal);
    if (this.held !== undefined) {
      if (this.logger) {
        this.logger.warn({ signal }, 'second signal during start-up: exiting now');
        this.logger.flush?.();
      } else {
        process.stderr.write(`switchboard: second signal (${signal}) during start-up: exiting now\n`);
      }
      process.exit(1);
    }
    this.held = signal;
    if (this.logger) this.logHeld(signal);
  }

  private logHeld(signal: NodeJS.Signals): void {
    this.logger?.info({ signal }, 'signal during start-up: shutting down as soon as start-up is done');
  }
}

/** What the audit writer reports of the rows it holds (AuditWriterStatus). */
interface UncommittedRows {
  queuedRows: number;
  journal?: string;
}

/**
 * What exiting at a second signal leaves of the audit log, for its log line: the rows not yet
 * committed, which the exit skips the final commit of. In a journal (strict mode on
 * `synchronous: normal`) the next start moves them in; otherwise (relaxed mode's rows waiting
 * out flushMs) they are lost, and this line is the only record that they were.
 */
export function uncommittedRowsNote(status: UncommittedRows | undefined): string {
  const rows = status?.queuedRows ?? 0;
  if (rows === 0) return '';
  const told = counted(rows, 'audit row');
  return status?.journal
    ? `; ${told} not yet committed: those in the journal are moved in at the next start`
    : `; ${told} not yet committed ${rows === 1 ? 'is' : 'are'} lost`;
}
