import { linearPatternEngine, PatternBudgetSpent, UnsupportedPattern, type LinearPattern, type PatternMeter } from '@switchboard/core';

/**
 * The longest answer a `pattern` is tried on. A pattern comes from an upstream and the value
 * from whoever answers; a longer value is refused before any matching is tried.
 */
export const PATTERN_INPUT_LIMIT = 4096;
/**
 * The steps (libs/core pattern-matcher.ts) the pattern checks of one form may take together,
 * as a tool result's may (ADR 011): a step count is the same on a loaded machine, where a
 * clock's limit refused correct answers. A 4096-character answer to a pattern of a few dozen
 * instructions takes at most some 100,000; a form of many long patterns is what reaches this.
 */
export const PATTERN_STEPS_PER_FORM = 1_000_000;
/**
 * The longest `pattern` compiled. Compiling judges each character class by JavaScript on
 * sample characters, so a form of long patterns of many classes cost seconds of the daemon's
 * thread (25 patterns of ~4,000 classes: 1.7 s), paid again for every answer.
 */
export const PATTERN_SOURCE_LIMIT = 1000;

/**
 * The `pattern`s of one form elicitation's string fields, compiled and matched by the gateway's
 * own linear-time engine (ADR 011), never by JavaScript's backtracking one: a pattern such as
 * `^(a+)+$` and the value it is tried on come from others, and the match runs on the daemon's
 * one thread. Patterns are read as ECMAScript with the `u` flag, as JSON Schema prescribes, and
 * unanchored (a pattern says where it anchors itself). One instance serves one schema check or
 * one answer's check: its steps and instructions are counted together.
 */
export class FormPatterns {
  private readonly meter: PatternMeter = { stepsLeft: PATTERN_STEPS_PER_FORM };
  private readonly engine = linearPatternEngine(this.meter);

  /**
   * The compiled pattern, or why there is none: not a regular expression, or one the engine
   * does not run (a backreference, a lookaround, too many instructions, or longer than
   * PATTERN_SOURCE_LIMIT, which also keeps groups far shallower than its recursive parser's
   * limit: thousands deep compile in V8 and overflow the stack there).
   */
  compile(source: unknown): LinearPattern | { unusable: 'not a regular expression' | 'not linear' } {
    if (typeof source !== 'string') return { unusable: 'not a regular expression' };
    if (source.length > PATTERN_SOURCE_LIMIT) return { unusable: 'not linear' };
    try {
      return this.engine(source, 'u');
    } catch (err) {
      if (err instanceof UnsupportedPattern) return { unusable: 'not linear' };
      if (err instanceof SyntaxError) return { unusable: 'not a regular expression' };
      throw err;
    }
  }

  /** Whether `value` matches; `undefined` when it is too long, or the form's steps are spent. */
  matches(pattern: LinearPattern, value: string): boolean | undefined {
    if (value.length > PATTERN_INPUT_LIMIT) return undefined;
    try {
      return pattern.test(value);
    } catch (err) {
      if (err instanceof PatternBudgetSpent) return undefined;
      throw err;
    }
  }
}
