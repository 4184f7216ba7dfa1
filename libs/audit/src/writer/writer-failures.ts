/**
 * How the audit writer reports that the log cannot be written: the error strict mode's
 * callers get, the rows of withheld answers, the failure's state and backoff, and the error
 * lines it logs (once per attempt, or per 1,000 journal failures or lost rows, so a full
 * disk does not flood the log). The writer keeps the state; these say what it becomes.
 */
import { countedBe } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import type { AuditEntry } from '../audit.types.js';
import { systemEntry } from '../system-entry.js';
import type { AuditMode } from './audit-writer-options.js';

/** Refusal and withheld-answer error: the log cannot be written, so strict mode will not run unaudited. */
export class AuditUnavailableError extends Error {
  constructor(readonly reason: string) {
    super(`The audit log cannot be written (${reason}); calls are refused until it recovers`);
  }
}

/** JSON-RPC code of AuditUnavailableError (implementation-defined server error range). */
export const AUDIT_UNAVAILABLE_CODE = -32013;

/** The rule of a row whose call strict mode refused because the log could not be written. */
export const AUDIT_UNAVAILABLE_RULE = 'audit:unavailable';

/** While the log cannot be written: why, since when, the next retry's delay, journal writes failed. */
export interface WriterFailure {
  message: string;
  since: number;
  retryMs: number;
  journalFailures: number;
}

const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * A commit failed: the failure as it now stands, its backoff doubled per attempt (so the log
 * gets at most one line per attempt), logged.
 */
export function reportCommitFailure(
  previous: WriterFailure | undefined,
  err: unknown,
  logger: Logger,
  mode: AuditMode,
  queuedRows: number,
): WriterFailure {
  const message = sqliteReason(err);
  const first = previous === undefined;
  const retryMs = first ? RETRY_FIRST_MS : Math.min(previous.retryMs * 2, RETRY_MAX_MS);
  const failure = { message, since: previous?.since ?? Date.now(), retryMs, journalFailures: previous?.journalFailures ?? 0 };
  logger.error(
    { err: message, queuedRows, mode, retryInMs: retryMs },
    first ? firstFailureMessage(mode) : 'audit: still cannot write the audit log',
  );
  return failure;
}

/**
 * A journal write failed: counted in the failure (a new one if there was none), which keeps
 * its backoff; logged the first time and every 1,000th.
 */
export function reportJournalFailure(
  previous: WriterFailure | undefined,
  err: unknown,
  logger: Logger,
  mode: AuditMode,
  queuedRows: number,
): WriterFailure {
  const message = sqliteReason(err);
  const first = previous === undefined;
  const failure = previous ?? { message, since: Date.now(), retryMs: RETRY_FIRST_MS, journalFailures: 0 };
  failure.journalFailures += 1;
  if (first || failure.journalFailures % 1000 === 0) {
    logger.error(
      { err: message, journalFailures: failure.journalFailures, queuedRows, mode },
      first ? firstFailureMessage(mode) : 'audit: journal writes still failing',
    );
  }
  return failure;
}

function firstFailureMessage(mode: AuditMode): string {
  return 'audit: cannot write the audit log; ' + (mode === 'strict' ? 'refusing calls until it recovers' : 'rows are held in memory');
}

/** Logs the first row lost to a full queue and every 1,000th. */
export function reportLostRows(lostRows: number, logger: Logger, maxQueuedRows: number): void {
  if (lostRows === 1 || lostRows % 1000 === 0) {
    logger.error({ lostRows, maxQueuedRows }, 'audit: queue full while the log cannot be written; rows are being lost');
  }
}

/**
 * The rows of a failed strict batch, whose hosts get an error instead of their answer:
 * amended (they are still queued) to say so, keeping the upstream's outcome in the message.
 * Returns the error to reject their callers with.
 */
export function withholdAnswers(entries: AuditEntry[], err: unknown): AuditUnavailableError {
  const reason = sqliteReason(err);
  for (const entry of entries) {
    const upstreamOutcome = entry.outcome ?? 'none';
    entry.outcome = 'error';
    entry.errorCode = AUDIT_UNAVAILABLE_CODE;
    entry.errorMessage = `answer withheld: audit log unavailable (${reason}); upstream outcome: ${upstreamOutcome}`;
  }
  return new AuditUnavailableError(reason);
}

/**
 * SQLite's or the file system's own code and message (SQLITE_FULL, SQLITE_BUSY, ENOSPC, ...):
 * what an operator needs. Node's messages already start with their code.
 */
export function sqliteReason(err: unknown): string {
  const e = err as { code?: string; message?: string };
  if (!e?.code) return String(e?.message ?? err);
  const message = String(e.message);
  return message.startsWith(`${e.code}:`) ? message : `${e.code}: ${message}`;
}

/** The row that says how many rows a full queue lost, committed once the log is writable again. */
export function lostRowsMarker(rows: number, since: number): AuditEntry {
  return systemEntry(
    {
      method: 'audit/rows-lost',
      decision: 'refused',
      rule: 'audit:queue-full',
      outcome: null,
      errorMessage: `${countedBe(rows, 'audit row', 'past')} lost while the log could not be written`,
    },
    { rows, since: new Date(since).toISOString() },
  );
}
