import { durationPattern, durationProblem, type DurationSetting } from '@switchboard/core';
import { z } from 'zod';
import { intIn, nonEmpty, text } from './config.schema.fields.js';

/*
 * The audit section of the config file (docs/audit.md): the most settings of any section,
 * and the two durations whose bounds config.rules.ts, the daemon and `audit verify` read
 * again, so they are spelt here once beside the schema that refuses them.
 */

/**
 * `audit.retention`: rows older than this are pruned. Zero (`0d`) would have every hourly
 * run delete all but the newest row: almost certainly a mistake for `off`, which keeps every
 * row, so it is refused. So is anything under an hour: `30s` is one key from `30d`, and the
 * first run, a minute after start, would delete all history but that last minute, for good,
 * while `audit verify` still passes. Short retentions above it are warned of (config.rules).
 */
export const AUDIT_RETENTION: DurationSetting = {
  name: 'audit.retention',
  example: '90d',
  off: 'keeps every row',
  zero: '(pruning would remove all but the newest row)',
  min: { at: '1h', why: '(pruning would delete nearly every row)' },
};

/**
 * `audit.checkpointEvery`: how often the daemon logs a checkpoint. Node's timers take at most
 * 2^31-1 ms (24.8 days) and fire at once beyond it; a week is plenty.
 */
export const AUDIT_CHECKPOINT_EVERY: DurationSetting = {
  name: 'audit.checkpointEvery',
  example: '1h',
  off: 'logs no checkpoints',
  max: '7d',
};

/** What the daemon reads for the two when the file leaves them out. */
export const AUDIT_DURATION_DEFAULTS = { retention: '90d', checkpointEvery: '1h' } as const;

/**
 * A setting that takes a duration (durationMs): its pattern is in the JSON schema for
 * editors; a value refused gets one reason, durationProblem's.
 */
const duration = (setting: DurationSetting) => {
  const pattern = durationPattern(setting);
  const reason = (issue: { input?: unknown }) => durationProblem(String(issue.input), setting);
  // Zod runs the refine after a failed regex too: it judges only a value of the right form (its longest).
  return text()
    .regex(pattern, { error: reason })
    .refine((value) => !pattern.test(value) || durationProblem(value, setting) === undefined, { error: reason });
};

/** A redaction pattern is a regex source, or /source/flags; it must compile. */
function compiles(pattern: string): boolean {
  const slashed = /^\/(.*)\/([a-z]*)$/s.exec(pattern);
  try {
    new RegExp(slashed ? slashed[1] : pattern, slashed ? slashed[2] : undefined);
    return true;
  } catch {
    return false;
  }
}

export const auditSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('false turns the audit log off (a warning is logged at start).'),
    mode: z
      .enum(['strict', 'relaxed'])
      .default('strict')
      .describe('strict: an answer is released only after its row is written to the journal (synchronous: normal) or committed (full); relaxed: rows are committed within flushMs.'),
    synchronous: z
      .enum(['normal', 'full'])
      .default('normal')
      .describe('normal: a committed row survives a killed process (kill -9), not a power cut; full: each commit is also fsynced, surviving power loss.'),
    flushMs: intIn(1, 60_000, 'must be a whole number of milliseconds from 1 to 60000')
      .default(200)
      .describe("The longest a row waits for its commit: relaxed mode, and strict mode's rows on their way from the journal."),
    maxQueuedRows: intIn(1000, 10_000_000, 'must be an integer from 1000 to 10000000')
      .default(100_000)
      .describe('Rows held in memory while the database cannot be written; beyond it they are counted as lost.'),
    retention: duration(AUDIT_RETENTION)
      .default(AUDIT_DURATION_DEFAULTS.retention)
      .describe("Rows older than this (at least 1h, or 'off') are pruned in the background; the hash chain stays verifiable."),
    checkpointEvery: duration(AUDIT_CHECKPOINT_EVERY)
      .default(AUDIT_DURATION_DEFAULTS.checkpointEvery)
      .describe("How often the daemon logs the audit chain's head as a checkpoint line (when rows were written since the last one), for `audit verify --checkpoint`; 'off' logs none."),
    maxArgumentBytes: intIn(0, 1_048_576, 'must be an integer from 0 to 1048576')
      .default(8192)
      .describe('Redacted arguments longer than this are cut; the digest covers the full arguments.'),
    completions: z.boolean().default(true).describe('Record completion/complete requests (they come at every keystroke in some hosts).'),
    redact: z
      .strictObject({
        defaults: z.boolean().default(true).describe('Apply the built-in secret patterns (docs/audit.md lists them).'),
        keys: z.array(nonEmpty()).default([]).describe('More key names whose values are replaced; /regex/flags allowed.'),
        patterns: z
          .array(z.string().refine(compiles, { error: 'must be a valid regular expression' }))
          .default([])
          .describe('More value patterns (regex source or /source/flags); every match is replaced.'),
        commands: z
          .array(z.string().regex(/^[^\s/\\]+$/, { error: "must be a command's name, without blanks or a path (acme-run, not /usr/bin/acme-run)" }))
          .default([])
          .describe("More commands (by name) whose argv arrays are read as one command line, searched with the patterns too (docs/audit.md)."),
      })
      .prefault({}),
  })
  .describe('The audit log of tool calls and refusals (docs/audit.md).');
