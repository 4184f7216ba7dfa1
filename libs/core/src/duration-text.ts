/*
 * A length of time in a message a caller or a person reads: how long to wait before trying
 * again ("retry in 250 ms"), how long something was given ("within 2.5 s"). Rounded up, never
 * down: a caller that waits as long as it is told must not be refused again for having been
 * told too little. And never to whole seconds, which said "retry in 1 s" for a wait of 250 ms
 * and "within 3 s" for 2.5 s: under a second it is whole milliseconds, from a second on
 * seconds to the tenth, which is at most 0.1 s more than the truth.
 */

/** `ms` rounded up to what a message says of it: whole ms under a second, else tenths of a second. */
function roundedUp(ms: number): { ms: number } | { seconds: number } {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`a duration must be a finite number of milliseconds, 0 or more; got ${ms}`);
  const whole = Math.ceil(ms);
  // Integer division by 100 is exact when it comes out whole, so ceil adds no tenth of its own.
  return whole < 1000 ? { ms: whole } : { seconds: Math.ceil(whole / 100) / 10 };
}

/**
 * `ms` as a message says it, short: "250 ms", "1 s", "1.3 s", "90 s". Never shorter than `ms`.
 * Throws a RangeError for a negative or non-finite value (no wait is either).
 */
export function durationText(ms: number): string {
  const said = roundedUp(ms);
  return 'ms' in said ? `${said.ms} ms` : `${said.seconds} s`;
}
