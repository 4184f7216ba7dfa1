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
   * cannot run in linear time (a backreference, a lookaround, too many instructions).
   */
  compile(source: unknown): LinearPattern | { unusable: 'not a regular expression' | 'not linear'; why?: string } {
    if (typeof source !== 'string') return { unusable: 'not a regular expression' };
    try {
      return this.engine(source, 'u');
    } catch (err) {
      if (err instanceof UnsupportedPattern) return { unusable: 'not linear', why: err.message };
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
