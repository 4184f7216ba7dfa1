import type { AuditEntry } from '../audit.types.js';
import { keepRecordText, recordText } from '../chain/row-hash.js';
import type { JournalMark } from '../journal/journal-mark.js';
import type { AuditMode, AuditWriterOptions, AuditWriterStatus } from './audit-writer-options.js';
import { newBatch, type Batch } from './batch.js';
import type { Committer } from './committer.js';
import {
  AUDIT_UNAVAILABLE_RULE,
  AuditUnavailableError,
  lostRowsMarker,
  reportCommitFailure,
  reportJournalFailure,
  reportLostRows,
  sqliteReason,
  withholdAnswers,
  type WriterFailure,
} from './writer-failures.js';

export type { AuditMode, AuditWriterOptions, AuditWriterStatus } from './audit-writer-options.js';
export { AUDIT_UNAVAILABLE_CODE, AUDIT_UNAVAILABLE_RULE, AuditUnavailableError } from './writer-failures.js';

/** A relaxed batch this large commits at once rather than waiting out flushMs. */
const EAGER_BATCH = 512;
/** Strict without a journal: the most event-loop turns a commit waits for the rows of requests still running. */
const MAX_GATHER_TURNS = 8;

/**
 * Group commit: rows are gathered into batches and each batch is one transaction. At most
 * one commit is in flight; whatever arrives while it runs (strict) or within `flushMs`
 * (relaxed) makes the next batch, so batches grow with load and the cost of a commit is
 * shared. One transaction per call would cost ~20 µs of CPU per row more.
 *
 * With a journal (strict mode on `synchronous: normal`), a strict batch is a journal write
 * instead of a commit: the callers wait for that, and the rows are committed as in relaxed
 * mode. Each commit then tells the database how many journal rows it holds (JournalMark).
 *
 * Without a journal (`synchronous: full`), strict commits also wait, a few event-loop turns
 * at most, for the rows of recorded requests still running (see expectRow): under load their
 * answers arrive in the next turns, and one commit with its fsync for all of them costs less
 * than one each. The wait ends at once when no row is expected (a lone caller waits for
 * nothing) or when a turn passes with no row queued and no recorded request started (the
 * loop is only waiting on upstreams). A journal write takes the rows the work in hand
 * produced (see append).
 *
 * Failures are never silent: rows stay queued and are retried with backoff, the failure
 * is logged as an error (and shown by /readyz), strict mode refuses new calls until a
 * commit succeeds, and rows beyond `maxQueuedRows` are counted, logged and recorded as a
 * marker row once the log is writable again.
 */
export class AuditWriter {
  private pending: Batch | undefined;
  /** Rows whose commit failed, oldest first; retried before anything newer. */
  private backlog: AuditEntry[] = [];
  /** The commit in flight, if any; resolves (never rejects) when it has settled. */
  private inFlight: Promise<void> | undefined;
  /** A commit was asked for while one was in flight. */
  private commitAfter = false;
  private scheduled: { immediate?: NodeJS.Immediate; timeout?: NodeJS.Timeout } | undefined;
  /** While the log cannot be written: why, since when, the next retry's delay, journal writes failed. */
  private failure: WriterFailure | undefined;
  private lost = { rows: 0, since: 0 };
  private readonly counters = { committedRows: 0, commits: 0, lostRows: 0, commitMs: 0, longestCommitMs: 0, journalWrites: 0 };
  /** Strict with a journal: rows not yet written to it (a write is due for them). */
  private journalBatch: Batch | undefined;
  private closed = false;
  /** Recorded requests running whose rows are not yet queued (expectRow minus expectedRowDone). */
  private rowsExpected = 0;
  /** Counts expectRow and append calls: unchanged over a turn means nothing happened in it. */
  private activity = 0;

  constructor(
    private readonly committer: Committer,
    private readonly options: AuditWriterOptions,
  ) {}

  get mode(): AuditMode {
    return this.options.mode;
  }

  /** False while commits fail; strict mode then refuses calls (see assertWritable). */
  get writable(): boolean {
    return this.failure === undefined;
  }

  /** Strict mode only: throws AuditUnavailableError while the log cannot be written. */
  assertWritable(): void {
    if (this.failure && this.options.mode === 'strict') throw new AuditUnavailableError(this.failure.message);
  }

  /**
   * A recorded request has started and will append its row when it ends: strict batches
   * wait a little for such rows (see the class comment). Pair with expectedRowDone.
   */
  expectRow(): void {
    this.rowsExpected += 1;
    this.activity += 1;
  }

  /** The request announced by expectRow has ended; its row, if any, is appended next. */
  expectedRowDone(): void {
    if (this.rowsExpected > 0) this.rowsExpected -= 1;
  }

  /**
   * Queues a row. Strict: resolves once it is committed, rejects with AuditUnavailableError
   * if that commit fails (the row stays queued and is retried). Relaxed: resolves at once.
   */
  append(entry: AuditEntry): Promise<void> {
    this.activity += 1;
    if (this.closed) throw new Error('audit writer is closed');
    if (this.queuedRows() >= this.options.maxQueuedRows) return this.lose();
    const batch = (this.pending ??= newBatch());
    batch.entries.push(entry);
    if (this.options.mode === 'relaxed') {
      if (batch.entries.length >= EAGER_BATCH) this.schedule(0);
      else this.schedule(this.options.flushMs);
      return RESOLVED;
    }
    if (this.options.journal && entry.rule === AUDIT_UNAVAILABLE_RULE) {
      // A call refused because the log cannot be written: nothing ran, and nobody waits for
      // its row. Journaling it would add a failing write (and its error) per refusal while
      // the disk is full, and once space returns, refusals by the thousand could fill it
      // again before the retry commits. It waits in memory for the database instead, like
      // a relaxed row (maxQueuedRows bounds it, and what is dropped is counted); a crash
      // before the log recovers loses it.
      this.schedule(this.options.flushMs);
      return RESOLVED;
    }
    if (this.options.journal) {
      // Committed like relaxed rows; the caller waits for the journal instead.
      this.schedule(batch.entries.length >= EAGER_BATCH ? 0 : this.options.flushMs);
      let journaled = this.journalBatch;
      if (!journaled) {
        journaled = this.journalBatch = newBatch();
        // Written as soon as the work in hand is done (process.nextTick: after this callback
        // and its promise jobs), so the rows it produces share one `write`: the answers in one
        // chunk of an upstream's output, say. Their answers then go out in the same callback.
        // Held to the end of the turn (setImmediate) or longer, as commits under `full` are
        // (gatherer), answers cost more than the writes it saves (ADR 007).
        process.nextTick(this.writeJournalNow);
      }
      journaled.entries.push(entry);
      return journaled.promise;
    }
    this.schedule(0);
    return batch.promise;
  }

  /** Commits everything queued now (after the commit in flight). Used at shutdown and by tests. */
  async flush(): Promise<void> {
    this.cancelSchedule();
    await this.inFlight;
    this.commit();
    await this.inFlight;
  }

  /** Final flush; logs loudly what could not be written. */
  async close(): Promise<void> {
    this.closed = true; // before the final commit: a failure then schedules no retry
    await this.flush();
    this.cancelSchedule();
    await this.committer.close();
    const left = this.queuedRows();
    const journal = this.options.journal;
    // With rows left, the journal stays: the next start moves those it holds.
    journal?.close(left === 0);
    if (left > 0) {
      this.options.logger.fatal(
        { rows: left, reason: this.failure?.message, journal: journal?.path },
        journal
          ? 'audit: rows could not be committed before shutdown; those in the journal are moved at the next start'
          : 'audit: rows could not be written before shutdown and are lost',
      );
    }
  }

  status(): AuditWriterStatus {
    return {
      mode: this.options.mode,
      writable: this.writable,
      failure: this.failure?.message,
      failingSince: this.failure ? new Date(this.failure.since).toISOString() : undefined,
      queuedRows: this.queuedRows(),
      ...this.counters,
      journal: this.options.journal?.path,
    };
  }

  private queuedRows(): number {
    return this.backlog.length + (this.pending?.entries.length ?? 0);
  }

  private schedule(delayMs: number): void {
    if (this.scheduled !== undefined) {
      // An immediate already set stays: re-setting it on every append would push the commit
      // back a turn each time rows keep arriving from setImmediate callbacks.
      if (delayMs > 0 || this.failure || this.scheduled.immediate) return;
      // A batch became due while a relaxed timer was set: commit sooner.
      this.cancelSchedule();
    }
    const run = () => {
      this.scheduled = undefined;
      this.commit();
    };
    if (delayMs === 0 && this.options.mode === 'strict' && !this.options.journal && !this.failure) {
      this.scheduled = { immediate: setImmediate(this.gatherer(run)) };
    } else if (delayMs === 0) {
      this.scheduled = { immediate: setImmediate(run) };
    } else {
      this.scheduled = { timeout: setTimeout(run, delayMs).unref() };
    }
  }

  /**
   * A check-phase callback that runs `commit` once a strict batch without a journal is
   * complete enough: no row expected, a turn with nothing new, or MAX_GATHER_TURNS turns.
   * Each further turn is a new immediate, kept in `scheduled` so that flush and close can
   * still cancel it.
   */
  private gatherer(commit: () => void): () => void {
    let turns = 0;
    let seen = this.activity;
    const gather = () => {
      turns += 1;
      const quiet = this.activity === seen;
      seen = this.activity;
      if (this.rowsExpected === 0 || quiet || turns >= MAX_GATHER_TURNS) commit();
      else this.scheduled = { immediate: setImmediate(gather) };
    };
    return gather;
  }

  private readonly writeJournalNow = (): void => this.writeJournal();

  /**
   * Writes the rows waiting for the journal in one `write` and releases their callers; if
   * the write fails, their answers are withheld as when a commit fails. Also run by every
   * commit first, so that a commit never holds a row the journal lacks (the mark counts on it).
   */
  private writeJournal(): void {
    const batch = this.journalBatch;
    if (!batch) return;
    this.journalBatch = undefined;
    const lines = batch.entries.map((entry) => recordText(0, entry));
    try {
      this.options.journal!.write(lines);
      this.counters.journalWrites += 1;
      // From here the rows do not change: their commit reuses the text.
      for (let i = 0; i < lines.length; i++) keepRecordText(batch.entries[i], lines[i]);
      batch.resolve();
    } catch (err) {
      // The rows are still queued for the database, amended to say the answer was withheld.
      this.withhold(batch, err);
      this.journalFailed(err);
    }
  }

  private cancelSchedule(): void {
    // Each handle goes to its own clear function: clearImmediate given a Timeout corrupts
    // Node's immediate queue (and stalls every later setImmediate in the process).
    if (this.scheduled?.immediate) clearImmediate(this.scheduled.immediate);
    if (this.scheduled?.timeout) clearTimeout(this.scheduled.timeout);
    this.scheduled = undefined;
  }

  /** Starts a commit of everything queued, unless one is in flight (its end starts the next). */
  private commit(): void {
    if (this.inFlight) {
      this.commitAfter = true;
      return;
    }
    if (this.options.journal) this.writeJournal();
    const batch = this.pending;
    this.pending = undefined;
    const entries = this.backlog.length > 0 ? this.backlog.concat(batch?.entries ?? []) : (batch?.entries ?? []);
    if (entries.length === 0 && this.lost.rows === 0) return;
    this.backlog = [];
    const marker = this.lost.rows > 0 ? lostRowsMarker(this.lost.rows, this.lost.since) : undefined;
    const journal = this.options.journal;
    // Every row journaled so far is in this commit or an earlier one (see writeJournal).
    const mark: JournalMark | undefined = journal && { journal: journal.name, generation: journal.generation, movedRows: journal.rows };
    const settle = (err?: unknown) => {
      this.inFlight = undefined;
      if (err === undefined) {
        this.committed(entries, batch, marker !== undefined);
        if (mark) this.emptyJournal(mark);
      } else {
        // Older rows go back in front of anything queued since.
        this.backlog = entries.concat(this.backlog);
        // With a journal the callers have had their answers: their rows are safe in it.
        if (batch && this.options.mode === 'strict' && !journal) this.withhold(batch, err);
        this.failed(err);
        return;
      }
      // Strict rows that arrived during this commit go next, at once: that is the group.
      // So do relaxed rows whose timer fired meanwhile.
      const again = this.commitAfter || (this.options.mode === 'strict' && !journal);
      this.commitAfter = false;
      if (again && this.pending && !this.closed) this.schedule(0);
    };
    const started = performance.now();
    const committing = this.committer.commit(marker ? [...entries, marker] : entries, mark);
    this.timed(performance.now() - started);
    this.inFlight = committing.then(
      () => settle(),
      (err: unknown) => settle(err),
    );
  }

  /**
   * After a commit: if no row was journaled since it began, all of the journal is in the
   * database, so it starts a new generation. If emptying fails, writing simply goes on in
   * this generation (the mark already counts the rows moved).
   */
  private emptyJournal(mark: JournalMark): void {
    const journal = this.options.journal!;
    if (journal.generation !== mark.generation || journal.rows !== mark.movedRows) return;
    try {
      journal.rotate();
    } catch (err) {
      this.options.logger.warn({ err: sqliteReason(err), journal: journal.path }, 'audit: could not empty the journal');
    }
  }

  /** Counts the event-loop time of one committer.commit call (see AuditWriterStatus.commitMs). */
  private timed(ms: number): void {
    this.counters.commitMs += ms;
    if (ms > this.counters.longestCommitMs) this.counters.longestCommitMs = ms;
  }

  private committed(entries: AuditEntry[], batch: Batch | undefined, hadMarker: boolean): void {
    if (hadMarker) this.lost = { rows: 0, since: 0 };
    this.counters.commits += 1;
    this.counters.committedRows += entries.length;
    if (this.failure) {
      this.options.logger.warn(
        { failedForMs: Date.now() - this.failure.since, rows: entries.length },
        'audit: the log is writable again; queued rows committed',
      );
      this.failure = undefined;
    }
    batch?.resolve();
  }

  /** The hosts of a failed strict batch get an error instead of their answer (see withholdAnswers). */
  private withhold(batch: Batch, err: unknown): void {
    batch.reject(withholdAnswers(batch.entries, err));
  }

  /**
   * A commit failed: one retry attempt. The backoff doubles per attempt (so the log gets at
   * most one line per attempt), and the retry is armed.
   */
  private failed(err: unknown): void {
    this.failure = reportCommitFailure(this.failure, err, this.options.logger, this.options.mode, this.queuedRows());
    this.armRetry(this.failure.retryMs);
  }

  /**
   * A journal write failed. Under load that happens once per batch of rows, far more often
   * than commits are retried, so it neither moves the backoff nor re-arms a retry already
   * armed (each would push the database's retry back, and a full disk would never be
   * retried while calls keep coming); it is logged the first time and every 1,000th, as
   * lost rows are.
   */
  private journalFailed(err: unknown): void {
    const first = this.failure === undefined;
    this.failure = reportJournalFailure(this.failure, err, this.options.logger, this.options.mode, this.queuedRows());
    // While a retry (or a commit) is on its way, it stays as it is.
    if (first || (this.scheduled?.timeout === undefined && !this.inFlight)) this.armRetry(this.failure.retryMs);
  }

  private armRetry(retryMs: number): void {
    if (this.closed) return;
    this.cancelSchedule();
    const timeout = setTimeout(() => {
      this.scheduled = undefined;
      this.commit();
    }, retryMs);
    this.scheduled = { timeout };
  }

  private lose(): Promise<void> {
    if (this.lost.rows === 0) this.lost.since = Date.now();
    this.lost.rows += 1;
    this.counters.lostRows += 1;
    reportLostRows(this.lost.rows, this.options.logger, this.options.maxQueuedRows);
    if (this.options.mode === 'relaxed') return RESOLVED;
    const refused = Promise.reject(new AuditUnavailableError(this.failure?.message ?? 'queue full'));
    // Refusal rows are appended without being awaited: their rejection must not go unhandled.
    refused.catch(() => undefined);
    return refused;
  }
}

const RESOLVED = Promise.resolve();
