import { counted } from './counted.js';

/*
 * A length of time in a message a caller or a person reads: how long to wait before trying
 * again ("retry in 250 ms"), how long something was given ("within 2.5 s"). Rounded up, never
 * down: a caller that waits as long as it is told must not be refused again for having been
 * told too little. And never rounded to whole seconds, which said "retry in 1 s" for a wait of 250 ms
 * and "within 3 s" for 2.5 s: under a second it is whole milliseconds, from a second on
 * seconds to the tenth, which is at most 0.1 s more than the truth.
 */

/** `ms` rounded up to what a message says of it: whole ms under a second, else a count of tenths of a second. */
function roundedUp(ms: number): { ms: number } | { tenths: number } {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`a duration must be a finite number of milliseconds, 0 or more; got ${ms}`);
  const whole = Math.ceil(ms);
  // Integer division by 100 is exact when it comes out whole, so ceil adds no tenth of its own.
  return whole < 1000 ? { ms: whole } : { tenths: Math.ceil(whole / 100) };
}

/**
 * `ms` as a message says it, short: "250 ms", "1 s", "1.3 s", "90 s". Never shorter than `ms`.
 * Throws a RangeError for a negative or non-finite value (no wait is either).
 */
export function durationText(ms: number): string {
  const said = roundedUp(ms);
  return 'ms' in said ? `${said.ms} ms` : `${said.tenths / 10} s`;
}

/** Units a duration in words may be said in, largest first. */
const WORD_UNITS: readonly [number, string][] = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
  [1000, 'second'],
];

/**
 * `ms` in words, for sentences people read ("For 15 minutes", "within 2.5 seconds"): in the
 * largest unit that says it exactly ("1 hour", "90 seconds"), otherwise as durationText
 * rounds it, spelt out ("2.5 seconds", "250 milliseconds"); "1 second", not "1 seconds".
 * Never shorter than `ms`. Throws a RangeError for a negative or non-finite value.
 * The inbox page's script words durations the same way (libs/admin/src/inbox/page/dom.js).
 */
export function durationWords(ms: number): string {
  const said = roundedUp(ms);
  if ('ms' in said) return counted(said.ms, 'millisecond');
  // In whole milliseconds again (integers, so the remainders are exact).
  const rounded = said.tenths * 100;
  for (const [size, unit] of WORD_UNITS) {
    if (rounded % size === 0) return counted(rounded / size, unit);
  }
  return counted(said.tenths / 10, 'second');
}
