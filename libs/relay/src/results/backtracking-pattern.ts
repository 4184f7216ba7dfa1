import { ANY_CHAR, classChars, disjoint, escaped, literal, NO_CHARS, union, type PatternChars } from './pattern-chars.js';

type Item = Record<string, unknown>;

/** What the scan knows of a group while it is open. */
interface OpenGroup {
  /** Whether it repeats or alternates inside (a quantifier, a `|`, such a group in it). */
  repeatsInside: boolean;
  /** Whether it has a `|` of its own. */
  alternates: boolean;
  /** What its atoms before the last one may match. */
  before: PatternChars;
  /** Its last atom's characters, while that atom is one character, not quantified; else undefined. */
  last: PatternChars | undefined;
  /** What its last atom may match, when that atom is no single character (a group, a quantified atom). */
  lastOther: PatternChars;
  /** How many atoms it has; its first atom's characters, as `last`; what the atoms after the first may match. */
  atoms: number;
  first: PatternChars | undefined;
  after: PatternChars;
}

const openGroup = (): OpenGroup => ({
  repeatsInside: false,
  alternates: false,
  before: NO_CHARS,
  last: undefined,
  lastOther: NO_CHARS,
  atoms: 0,
  first: undefined,
  after: NO_CHARS,
});

/**
 * Whether a regular expression may take exponential time in JavaScript's backtracking
 * engine: a repeated group that itself repeats or alternates (`(a+)+`, `(a|aa)*`, `(\w+\s?)*`)
 * or a backreference. A judgement of the source's form, not of its meaning, so it errs on
 * the safe side, with one exception it can prove: a repeated group that ends (or begins)
 * with one character (no alternative, no quantifier) that nothing else in the group can
 * match, as the `\.` of `(?:[a-z0-9-]+\.)+` or the `/` of `(?:/[a-z]+)+`. Each repetition
 * then ends (begins) at such a character and holds no other, so there is one way to split
 * a string into repetitions, not exponentially many. One pass over the source, in time
 * linear in its length.
 */
export function mayBacktrackBadly(source: string): boolean {
  /** The groups open at this point, innermost last. */
  const groups: OpenGroup[] = [];
  const top = () => groups[groups.length - 1] as OpenGroup | undefined;
  const markOpenGroup = () => {
    const g = top();
    if (g) g.repeatsInside = true;
  };
  /** An atom of the innermost open group begins: `single`, when it is one character, else what it may match. */
  const atom = (chars: PatternChars, single: boolean) => {
    const g = top();
    if (!g) return;
    g.before = union(g.before, union(g.last ?? NO_CHARS, g.lastOther));
    g.last = single ? chars : undefined;
    g.lastOther = single ? NO_CHARS : chars;
    if (g.atoms++ === 0) g.first = single ? chars : undefined;
    else g.after = union(g.after, chars);
  };
  /** A quantifier follows the last atom: it is no single character any more. */
  const quantified = () => {
    markOpenGroup();
    const g = top();
    if (g?.last) [g.lastOther, g.last] = [g.last, undefined];
    if (g?.atoms === 1) g.first = undefined;
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const next = source[++i] ?? '';
      if ((next >= '1' && next <= '9') || next === 'k') return true;
      const chars = escaped(next);
      atom(chars ?? NO_CHARS, chars !== undefined);
    } else if (c === '[') {
      const end = classEnd(source, i + 1);
      atom(classChars(source.slice(i + 1, end)), true);
      i = end;
    } else if (c === '(') {
      groups.push(openGroup());
      i = afterGroupPrefix(source, i + 1) - 1;
    } else if (c === ')') {
      const g = groups.pop() ?? openGroup();
      const next = source[i + 1];
      const repeated = next === '*' || next === '+' || next === '{';
      if (g.repeatsInside && repeated && !separated(g)) return true;
      if (g.repeatsInside || repeated) markOpenGroup();
      atom(union(g.before, union(g.last ?? NO_CHARS, g.lastOther)), false);
    } else if (c === '{') {
      const end = /^\{\d+(,\d*)?\}/.exec(source.slice(i, i + 24));
      if (end) {
        quantified();
        i += end[0].length - 1;
      } else atom(literal(c), true);
    } else if (c === '*' || c === '+' || c === '?') {
      quantified();
    } else if (c === '|') {
      markOpenGroup();
      const g = top();
      if (g) g.alternates = true;
    } else if (c === '^' || c === '$') {
      atom(NO_CHARS, false);
    } else {
      atom(c === '.' ? ANY_CHAR : literal(c), true);
    }
  }
  return false;
}

/** Whether a group's repetitions are split by its last or first character: see mayBacktrackBadly. */
function separated(g: OpenGroup): boolean {
  if (g.alternates) return false;
  return (g.last !== undefined && disjoint(g.last, g.before)) || (g.first !== undefined && g.atoms > 1 && disjoint(g.first, g.after));
}

/** The index of the `]` that closes a class whose source starts at `from` (`[]` is an empty class, as in JavaScript). */
function classEnd(source: string, from: number): number {
  let i = from;
  for (; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
  return Math.min(i, source.length);
}

/** Past `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!` or `(?<name>`, from just after the `(`. */
function afterGroupPrefix(source: string, from: number): number {
  if (source[from] !== '?') return from;
  const kind = source[from + 1];
  if (kind === ':' || kind === '=' || kind === '!') return from + 2;
  if (kind === '<') {
    const after = source[from + 2];
    if (after === '=' || after === '!') return from + 3;
    const close = source.indexOf('>', from + 2);
    return close < 0 ? source.length : close + 1;
  }
  return from + 1;
}

/** The first regular expression in a JSON Schema (a `pattern`, a `patternProperties` key) that mayBacktrackBadly. */
export function backtrackingPatternIn(schema: unknown): string | undefined {
  if (Array.isArray(schema)) {
    for (const item of schema) {
      const found = backtrackingPatternIn(item);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof schema !== 'object' || schema === null) return undefined;
  for (const [key, value] of Object.entries(schema as Item)) {
    if (key === 'pattern' && typeof value === 'string' && mayBacktrackBadly(value)) return value;
    if (key === 'patternProperties' && typeof value === 'object' && value !== null) {
      const found = Object.keys(value).find(mayBacktrackBadly);
      if (found !== undefined) return found;
    }
    const found = backtrackingPatternIn(value);
    if (found !== undefined) return found;
  }
  return undefined;
}
