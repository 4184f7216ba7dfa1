import { counted } from './counted.js';

/*
 * A length of time in a message a caller or a person reads: how long to wait before trying
 * again ("retry in 250 ms"), how long something was given ("within 2.5 s"). Rounded up, never
 * down: a caller that waits as long as it is told must not be refused again for having been
 * told too little. And not rounded to whole seconds below a minute, which said "retry in 1 s"
 * for a wait of 250 ms and "within 3 s" for 2.5 s: under a second it is whole milliseconds,
 * under a minute seconds to the tenth (at most 0.1 s more than the truth).
 */

/** `ms` rounded up to what a message says of it: whole ms under a second, else a count of tenths of a second. */
function roundedUp(ms: number): { ms: number } | { tenths: number } {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`a duration must be a finite number of milliseconds, 0 or more; got ${ms}`);
  const whole = Math.ceil(ms);
  // Integer division by 100 is exact when it comes out whole, so ceil adds no tenth of its own.
  return whole < 1000 ? { ms: whole } : { tenths: Math.ceil(whole / 100) };
}

/**
 * `ms` as a message says it, short: "250 ms", "1.3 s", "1 min 30 s", "23 h 59 min", "2 d 1 h".
 * Never shorter than `ms`. A wait of a minute or more is rounded up to the second, one of an
 * hour or more to the minute, and one of two days or more to the hour: a day's bucket said
 * "retry in 86400 s", and a year-long token "8760 h away", true but unreadable.
 * Throws a RangeError for a negative or non-finite value (no wait is either).
 */
export function durationText(ms: number): string {
  const said = roundedUp(ms);
  if ('ms' in said) return `${said.ms} ms`;
  if (said.tenths < 600) return `${said.tenths / 10} s`;
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 3600) return joined(Math.floor(seconds / 60), 'min', seconds % 60, 's');
  const minutes = Math.ceil(ms / 60_000);
  if (minutes < 48 * 60) return joined(Math.floor(minutes / 60), 'h', minutes % 60, 'min');
  const hours = Math.ceil(ms / 3_600_000);
  return joined(Math.floor(hours / 24), 'd', hours % 24, 'h');
}

/** "1 min", "1 min 30 s": the smaller part only when it is not zero. */
function joined(large: number, largeUnit: string, small: number, smallUnit: string): string {
  return small === 0 ? `${large} ${largeUnit}` : `${large} ${largeUnit} ${small} ${smallUnit}`;
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
