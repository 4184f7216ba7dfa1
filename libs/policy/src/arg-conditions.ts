import type { PolicyRule } from './policy-document.js';

/** One test of a rule's `when:` (exactly one of its fields is set; the schema checks that). */
export type ArgTest = NonNullable<PolicyRule['when']>[string];

/** The effect of the rule a condition belongs to: it decides what a value the test cannot judge makes of the rule. */
export type RuleEffect = 'allow' | 'confirm' | 'deny';

/**
 * What one test says of a value: it holds, it does not, or the value is of a kind the
 * test cannot judge (an array, an object, null, a scalar of another type than the test's
 * operands, a path that is relative or holds NUL or a backslash). null counts as absent.
 */
export type Verdict = boolean | typeof UNJUDGEABLE;
export const UNJUDGEABLE = Symbol('unjudgeable');

/** The argument is absent (undefined or null): `eq`, `in`, `startsWith` and `pathWithin` fail, `notIn` holds. */
const MISSING = Symbol('missing');

/** What a path through an array, null or a scalar reaches: no test judges it (it is not a string, nor of any operand's type). */
const UNREACHABLE = Symbol('unreachable');

type Scalar = string | number | boolean;

interface Check {
  /** The path under `args`, split at its dots. */
  readonly path: readonly string[];
  readonly test: (value: unknown) => Verdict;
}

/**
 * A rule's `when:` compiled. Each test judges the argument's value as a whole; unlike
 * MongoDB (CASL's default matcher), an array is never searched for an element that passes,
 * and a dotted path never goes through an array. A value a test cannot judge fails closed:
 * an allow does not apply, while a deny, and a confirm, do.
 */
export class ArgConditions {
  /** Fail closed: an unjudgeable value keeps an allow from applying, and makes a deny or a confirm apply. */
  private readonly unjudgeableHolds: boolean;

  constructor(
    private readonly checks: readonly Check[],
    effect: RuleEffect,
  ) {
    this.unjudgeableHolds = effect !== 'allow';
  }

  /** Whether every condition holds for these arguments (the `arguments` of a tools/call or prompts/get). */
  matches(args: unknown): boolean {
    return this.checks.every(({ path, test }) => {
      const verdict = test(argumentAt(args, path));
      return verdict === UNJUDGEABLE ? this.unjudgeableHolds : verdict;
    });
  }
}

/** A rule's `when:` as ArgConditions; undefined when it has none. */
export function compileArgConditions(when: Record<string, ArgTest> | undefined, effect: RuleEffect): ArgConditions | undefined {
  const checks = Object.entries(when ?? {}).map(([field, test]): Check => ({ path: field.split('.').slice(1), test: compileTest(test) }));
  return checks.length > 0 ? new ArgConditions(checks, effect) : undefined;
}

function compileTest(test: ArgTest): (value: unknown) => Verdict {
  if (test.eq !== undefined) return oneOf([test.eq], true);
  if (test.in !== undefined) return oneOf(test.in, true);
  if (test.notIn !== undefined) return oneOf(test.notIn, false);
  if (test.startsWith !== undefined) {
    const prefix = test.startsWith;
    return (value) => (value === MISSING ? false : typeof value !== 'string' ? UNJUDGEABLE : value.startsWith(prefix));
  }
  const dir = normalizePosixPath(test.pathWithin!);
  if (dir === undefined) throw new Error(`pathWithin needs an absolute path, not ${JSON.stringify(test.pathWithin)}`);
  return (value) => (value === MISSING ? false : isPathWithin(value, dir));
}

/**
 * `eq`/`in` (wanted: true) or `notIn` (wanted: false). Only a scalar of one of the operands'
 * types is judged, by strict equality; anything else (`"3"` for `3`, `[OPS]` for `OPS`, an
 * object, null) is unjudgeable.
 */
function oneOf(values: readonly Scalar[], wanted: boolean): (value: unknown) => Verdict {
  const types = new Set<string>(values.map((v) => typeof v));
  return (value) => {
    if (value === MISSING) return !wanted;
    if (!types.has(typeof value)) return UNJUDGEABLE; // operands are never null, objects or arrays
    return values.includes(value as Scalar) === wanted;
  };
}

/**
 * The value at `path` under the arguments. Paths go through objects only: a step into an
 * array or a scalar gives UNREACHABLE, which no test can judge (MongoDB would try
 * each element of an array); a key that is not there, or null on the way, gives MISSING. Own properties only,
 * so `args.constructor` is not Object's.
 */
function argumentAt(args: unknown, path: readonly string[]): unknown {
  let value = args;
  for (const key of path) {
    if (value === undefined || value === null) return MISSING; // no arguments at all, or an absent object
    if (typeof value !== 'object' || Array.isArray(value)) return UNREACHABLE;
    if (!Object.hasOwn(value, key)) return MISSING;
    value = (value as Record<string, unknown>)[key];
  }
  // null is how many hosts send an optional argument they leave out, and how upstreams read it.
  return value === undefined || value === null ? MISSING : value;
}

/**
 * An absolute POSIX path with repeated slashes collapsed and `.` and `..` resolved
 * (`..` at the root stays at the root), without a trailing slash (`/` stays `/`).
 * Undefined for a path that is not absolute or that holds a NUL or a backslash.
 */
export function normalizePosixPath(path: string): string | undefined {
  if (!path.startsWith('/') || path.includes('\0') || path.includes('\\')) return undefined;
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

/**
 * `pathWithin`: whether a value is a path that, normalised, is the directory `dir` (already
 * normalised) or lies under it. Not a string, or a string that is not an absolute path or
 * holds a NUL or a backslash (Windows would read it as a separator): unjudgeable.
 * Lexical: a symbolic link under `dir` can still lead outside it.
 */
export function isPathWithin(value: unknown, dir: string): Verdict {
  if (typeof value !== 'string') return UNJUDGEABLE;
  const path = normalizePosixPath(value);
  if (path === undefined) return UNJUDGEABLE;
  return path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);
}
