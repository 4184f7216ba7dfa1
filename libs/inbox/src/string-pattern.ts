import { Script, createContext } from 'node:vm';

/**
 * The longest answer a `pattern` is tried on. A pattern comes from an upstream and the value
 * from whoever answers; a longer value is refused before any matching is tried.
 */
export const PATTERN_INPUT_LIMIT = 4096;
/**
 * How long one match may run. A pattern such as `^(a+)+$` backtracks for ever on a crafted
 * value, and the match runs on the daemon's only thread: it runs in a VM context whose
 * timeout interrupts it, and a value that takes longer is refused.
 */
const PATTERN_TIMEOUT_MS = 50;

const context = createContext({});
const matchScript = new Script('pattern.test(value)');

/**
 * A string field's `pattern` as a regular expression: ECMAScript syntax with the `u` flag, as
 * JSON Schema prescribes, and unanchored (a pattern says where it anchors itself). Undefined
 * when it is not a string or does not compile.
 */
export function compilePattern(source: unknown): RegExp | undefined {
  if (typeof source !== 'string') return undefined;
  try {
    return new RegExp(source, 'u');
  } catch {
    return undefined;
  }
}

/** Whether `value` matches; `undefined` when that could not be found out within the bounds above. */
export function matchesPattern(pattern: RegExp, value: string): boolean | undefined {
  if (value.length > PATTERN_INPUT_LIMIT) return undefined;
  context.pattern = pattern;
  context.value = value;
  try {
    return matchScript.runInContext(context, { timeout: PATTERN_TIMEOUT_MS }) === true;
  } catch {
    return undefined;
  } finally {
    context.pattern = undefined;
    context.value = undefined;
  }
}
