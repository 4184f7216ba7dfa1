/**
 * The characters a regular expression's atom may match, approximately: each ASCII character
 * exactly, everything else as one bit (`other`), so that two sets are disjoint only when
 * they certainly are. What this cannot tell (a `\p{...}`, a `\u` escape) is taken for any
 * character: a wrong "may overlap" costs a pattern its check, a wrong "disjoint" could
 * cost the daemon seconds (backtracking-pattern.ts).
 */
export interface PatternChars {
  ascii: bigint;
  other: boolean;
}

const ASCII_ALL = (1n << 128n) - 1n;
export const NO_CHARS: PatternChars = { ascii: 0n, other: false };
export const ANY_CHAR: PatternChars = { ascii: ASCII_ALL, other: true };

const range = (from: number, to: number): bigint => ((1n << BigInt(to - from + 1)) - 1n) << BigInt(from);
const DIGITS = range(48, 57);
const WORD = DIGITS | range(65, 90) | range(97, 122) | (1n << 95n);
// \s also matches Unicode spaces (U+00A0, U+FEFF...): `other`.
const SPACE = range(9, 13) | (1n << 32n);

export function union(a: PatternChars, b: PatternChars): PatternChars {
  return { ascii: a.ascii | b.ascii, other: a.other || b.other };
}

export function disjoint(a: PatternChars, b: PatternChars): boolean {
  return (a.ascii & b.ascii) === 0n && !(a.other && b.other);
}

/** One character, as a literal matches it. */
export function literal(c: string): PatternChars {
  const code = c.charCodeAt(0);
  return code < 128 ? { ascii: 1n << BigInt(code), other: false } : { ascii: 0n, other: true };
}

/**
 * What the escape `\c` (c the character after the backslash) matches outside or inside a
 * class: a class escape, an escaped punctuation character, else (a \u, \x, \p, \c... escape,
 * whose length this does not read) any character. `undefined` for a backreference or an
 * assertion (`\b`), which match no character of their own.
 */
export function escaped(c: string): PatternChars | undefined {
  switch (c) {
    case 'd':
      return { ascii: DIGITS, other: false };
    case 'w':
      return { ascii: WORD, other: false };
    case 's':
      return { ascii: SPACE, other: true };
    case 'b':
    case 'B':
      return undefined;
    default:
      return /[A-Za-z0-9]/.test(c) ? ANY_CHAR : literal(c);
  }
}

/**
 * The characters a class matches, from its source between `[` and `]`: literals, ranges and
 * the escapes `escaped` knows. A negated class, or one with what it cannot read, is any character.
 */
export function classChars(body: string): PatternChars {
  if (body.startsWith('^')) return ANY_CHAR;
  let chars = NO_CHARS;
  let previous: number | undefined;
  for (let i = 0; i < body.length; i++) {
    let c = body[i];
    if (c === '\\') {
      const next = body[++i] ?? '';
      const set = escaped(next);
      if (set === undefined || set === ANY_CHAR || /[dws]/.test(next)) {
        chars = union(chars, set ?? ANY_CHAR);
        previous = undefined;
        continue;
      }
      c = next;
    } else if (c === '-' && previous !== undefined && i + 1 < body.length) {
      let to = body[++i];
      if (to === '\\') {
        to = body[++i] ?? '';
        if (/[A-Za-z0-9]/.test(to)) return ANY_CHAR;
      }
      const [from, end] = [previous, to.charCodeAt(0)];
      if (end < from) return ANY_CHAR;
      chars = union(chars, { ascii: end < 128 ? range(from, end) : range(from, 127), other: end >= 128 });
      previous = undefined;
      continue;
    }
    chars = union(chars, literal(c));
    previous = c.charCodeAt(0) < 128 ? c.charCodeAt(0) : undefined;
  }
  return chars;
}
