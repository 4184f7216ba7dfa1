import type { Logger } from '@switchboard/observability';
import type { HttpRefusal, RefusalListener, UnlistedValue } from './request-guard.js';

/** Distinct Hosts and Origins named in the log in any hour; refusals of others are only counted. */
export const NAMED_PER_HOUR = 32;
/** The longest value the log repeats (a DNS name is at most 253, plus a port). */
export const MAX_NAMED_CHARS = 260;
const HOUR_MS = 3_600_000;

// C0 and C1 controls, line and paragraph separators, bidi overrides: a client chooses the
// header, and must not be able to start a line of its own or reorder what an operator reads.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escaped(c: string): string {
  if (c === '\n') return '\\n';
  if (c === '\r') return '\\r';
  if (c === '\t') return '\\t';
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** The value as the log may repeat it: on one line, escapes for what is unsafe, cut to MAX_NAMED_CHARS. */
function loggable(value: string): { value: string; cut: boolean } {
  const safe = value.replace(UNSAFE, escaped);
  if (safe.length <= MAX_NAMED_CHARS) return { value: safe, cut: false };
  return { value: `${safe.slice(0, MAX_NAMED_CHARS - 1)}…`, cut: true };
}

const ADVICE: Record<UnlistedValue['setting'], { field: 'host' | 'origin'; text: (value: string) => string }> = {
  'security.allowedHosts': {
    field: 'host',
    text: (v) =>
      `refused a request for Host '${v}' (403): it is not in security.allowedHosts. If this daemon should answer under that name ` +
      `(behind a reverse proxy, a new hostname), add it to security.allowedHosts; it is not named again for an hour`,
  },
  'security.allowedOrigins': {
    field: 'origin',
    text: (v) =>
      `refused a request from Origin '${v}' (403): it is not in security.allowedOrigins. If pages of that origin should reach ` +
      `this daemon, add it to security.allowedOrigins; it is not named again for an hour`,
  },
};

/**
 * Tells the operator why a client got 403 for its Host or Origin, and which setting admits it:
 * the 403 goes to whoever asked and so names no setting, and the audit log may be off. Each
 * value is named at most once an hour; a client that sends many values gets
 * NAMED_PER_HOUR of them named an hour, and the refusals past that are counted in one line
 * an hour after the first of them. Refusals no setting would admit (a malformed Host) are
 * left to the audit log.
 */
export class UnlistedWarnings {
  /** `setting value` -> when it was named; in the order named, so the oldest come first. */
  private readonly named = new Map<string, number>();
  private unnamed = 0;
  private report?: NodeJS.Timeout;

  constructor(private readonly log: Logger) {}

  /** For every place that runs the Host/Origin check (refusedForeign); other refusals pass by. */
  readonly listener: RefusalListener = (refusal) => this.note(refusal);

  /** The count not said yet is said now: a daemon that stops does not lose it. */
  stop(): void {
    clearTimeout(this.report);
    this.reportUnnamed();
  }

  private note({ decision, unlisted }: HttpRefusal): void {
    if (decision !== 'refused' || !unlisted) return;
    const now = Date.now();
    for (const [key, at] of this.named) {
      if (now - at < HOUR_MS) break;
      this.named.delete(key);
    }
    const { value, cut } = loggable(unlisted.value);
    const key = `${unlisted.setting} ${value}`;
    if (this.named.has(key)) return;
    if (this.named.size >= NAMED_PER_HOUR) return this.countUnnamed();
    this.named.set(key, now);
    const { field, text } = ADVICE[unlisted.setting];
    this.log.warn({ [field]: value, setting: unlisted.setting, ...(cut && { length: unlisted.value.length }) }, text(value));
  }

  private countUnnamed(): void {
    if (this.unnamed++ > 0) return;
    this.report = setTimeout(() => this.reportUnnamed(), HOUR_MS);
    this.report.unref();
  }

  private reportUnnamed(): void {
    this.report = undefined;
    if (this.unnamed === 0) return;
    const count = this.unnamed;
    this.unnamed = 0;
    this.log.warn(
      { unnamed: count },
      `${count} more ${count === 1 ? 'request was' : 'requests were'} refused (403) in the last hour for a Host or Origin ` +
        `not in security.allowedHosts or security.allowedOrigins, under names not logged (${NAMED_PER_HOUR} distinct names an hour are)`,
    );
  }
}
