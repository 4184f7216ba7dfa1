import { AUDIT_DECISIONS, decisionMeant, isAuditDecision, parseInstant } from '@switchboard/audit';
import type { AuditFilter } from '@switchboard/audit';
import { DURATION_UNITS_MS } from '@switchboard/core';
import { usageError } from './command-error.js';

/** The filter options of `audit tail`, `export` and `stats`. */
export const FILTER_OPTIONS = {
  since: { type: 'string' },
  until: { type: 'string' },
  principal: { type: 'string' },
  tool: { type: 'string' },
  decision: { type: 'string' },
  method: { type: 'string' },
  upstream: { type: 'string' },
  session: { type: 'string' },
  'after-id': { type: 'string' },
} as const;

export type FilterValues = Partial<Record<keyof typeof FILTER_OPTIONS, string>>;

// A row id as SQLite gives it: a whole number, within what a JavaScript number holds exactly.
const ROW_ID = /^\d{1,15}$/;

// The settings' units, but not their grammar (durationMs): "that long ago" may be 0 (now)
// and up to 9 digits (`1000000s`), which no setting takes.
const DURATION = /^(\d{1,9})(s|m|h|d|w)$/;

/**
 * `--since`/`--until` values: an ISO 8601 date or date-time, epoch milliseconds (a row's
 * `at`, as the admin API takes them too), or a duration (`30m`, `24h`, `7d`) meaning that
 * long before `now`. Undefined when it is none of them.
 */
export function parseWhen(text: string, now: number): number | undefined {
  const duration = DURATION.exec(text);
  if (duration) return now - Number(duration[1]) * DURATION_UNITS_MS[duration[2] as keyof typeof DURATION_UNITS_MS];
  // Digits alone only as long as a time since 1973 is: `--since 7` is a duration without its
  // unit far more often than a moment of 1970, and must not quietly mean every row.
  if (/^\d+$/.test(text) && !EPOCH_MS.test(text)) return undefined;
  return parseInstant(text);
}

/** Epoch milliseconds on the command line: 12 to 15 digits. */
const EPOCH_MS = /^\d{12,15}$/;

/** Turns the filter options into an AuditFilter; every bad value is reported at once (exit 2). */
export function parseFilters(values: FilterValues, now = Date.now()): AuditFilter {
  const problems: string[] = [];
  const filter: AuditFilter = {};
  for (const option of ['since', 'until'] as const) {
    const text = values[option];
    if (text === undefined) continue;
    const ms = parseWhen(text, now);
    if (ms === undefined) problems.push(`--${option} '${text}': expected an ISO 8601 date or date-time, epoch milliseconds, or a duration like 30m, 24h, 7d`);
    else filter[option] = ms;
  }
  if (filter.since !== undefined && filter.until !== undefined && filter.since >= filter.until) {
    problems.push('--since must be earlier than --until');
  }
  if (values.decision !== undefined) {
    if (isAuditDecision(values.decision)) filter.decision = values.decision;
    else {
      const meant = decisionMeant(values.decision);
      problems.push(`--decision '${values.decision}': expected one of ${AUDIT_DECISIONS.join(', ')}${meant ? ` (did you mean ${meant}?)` : ''}`);
    }
  }
  for (const option of ['principal', 'tool', 'method', 'upstream', 'session'] as const) {
    const text = values[option];
    if (text === undefined) continue;
    if (text === '') problems.push(`--${option} must not be empty`);
    else filter[option === 'session' ? 'sessionId' : option] = text;
  }
  const afterId = values['after-id'];
  if (afterId !== undefined) {
    if (ROW_ID.test(afterId)) filter.afterId = Number(afterId);
    else problems.push(`--after-id '${afterId}': expected a row id, a whole number from 0 (the id of the last row you have)`);
  }
  if (problems.length > 0) throw usageError(problems.join('\n'));
  return filter;
}
