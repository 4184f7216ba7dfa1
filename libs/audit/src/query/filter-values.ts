import { closestKey } from '@switchboard/config';
import type { AuditDecision, AuditRow } from '../audit.types.js';

/** Every decision a row can carry, for validating `decision` filters (the CLI's and the API's). */
export const AUDIT_DECISIONS: readonly AuditDecision[] = ['allowed', 'denied', 'limited', 'unauthenticated', 'refused'];

export const isAuditDecision = (text: string): text is AuditDecision => (AUDIT_DECISIONS as readonly string[]).includes(text);

/**
 * The decision a refused `decision` filter most likely meant. The policy's words for an
 * effect (`deny`, `allow`) are what a user reaches for, and a row says `denied`: too far
 * apart for a typo, so the past tense is tried first, then a misspelling (closestKey).
 */
export function decisionMeant(text: string): AuditDecision | undefined {
  const word = text.toLowerCase();
  const pastTense = AUDIT_DECISIONS.find((d) => d === word || d === `${word}ed` || d === `${word}d` || d === `${word.slice(0, -1)}ied`);
  if (pastTense) return pastTense;
  const close = closestKey(word, AUDIT_DECISIONS);
  return close !== undefined && isAuditDecision(close) ? close : undefined;
}

// A date, or a date and time with optional seconds, fraction and offset; no offset means local time.
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date (`2025-06-01`, midnight UTC) or date-time, as epoch ms; undefined when
 * the text is not one. Stricter than Date.parse, which accepts many other shapes and rolls
 * `2025-02-30` over into March.
 */
export function parseIsoInstant(text: string): number | undefined {
  const match = ISO_INSTANT.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Epoch milliseconds as rows hold them (`at`): digits alone. */
const EPOCH_MS = /^\d{1,15}$/;

/**
 * A time bound as both the admin API and the command line take it: an ISO 8601 date or
 * date-time (parseIsoInstant), or epoch milliseconds, as a row's `at` is written.
 */
export function parseInstant(text: string): number | undefined {
  return EPOCH_MS.test(text) ? Number(text) : parseIsoInstant(text);
}

/** A row as the API and the CLI's JSON output show it: `at` also as an ISO `time`. */
export function auditRowJson(row: AuditRow): Record<string, unknown> {
  const { id, ...rest } = row;
  return { id, time: new Date(row.at).toISOString(), ...rest };
}
