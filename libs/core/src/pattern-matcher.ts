import { Assertion, compilePattern, Op, UnsupportedPattern, type PatternProgram } from './pattern-program.js';

/**
 * The steps one check (of a tool result, of a form's answer) may spend on its patterns, shared
 * by all the patterns and strings it checks: a step is one state of one pattern's automaton at one character, so a
 * string of n characters costs at most n times its pattern's instructions (pattern-program.ts).
 * Set before each check; a pattern that would go past it throws PatternBudgetSpent.
 */
export interface PatternMeter {
  stepsLeft: number;
}

/** Thrown out of a check (ajv's of a result, or a form's) whose patterns would take more steps than its PatternMeter holds. */
export class PatternBudgetSpent extends Error {
  constructor() {
    super('these pattern checks would take more steps than their meter holds');
  }
}

/** What ajv's `code.regExp` option expects of a pattern: ajv keys its compiled patterns by toString(). */
export interface LinearPattern {
  test(input: string): boolean;
  toString(): string;
}

/**
 * The instructions (pattern-program.ts) all the patterns one engine compiles may have together
 * (one read of a tools list, one form elicitation's schema): each takes some 28 bytes while its
 * check is kept, and one read's schemas could otherwise hold thousands of patterns such as
 * [a-z]{4000}.
 */
export const MAX_INSTRUCTIONS_PER_READ = 100_000;

/**
 * A linear-time regular expression engine for one read of a tools list (ajv's `code.regExp`
 * option) or one form elicitation's check (libs/inbox): compiles each pattern once
 * (pattern-program.ts) and checks strings against it, counting their steps on `meter`. A
 * pattern it does not take throws UnsupportedPattern, naming it.
 */
export function linearPatternEngine(meter: PatternMeter): (source: string, flags: string) => LinearPattern {
  const compiled = new Map<string, LinearPattern>();
  let instructions = 0;
  return (source, flags) => {
    const key = `/${source}/${flags}`;
    let pattern = compiled.get(key);
    if (pattern) return pattern;
    let program: PatternProgram;
    try {
      program = compilePattern(source, flags);
      if ((instructions += program.ops.length) > MAX_INSTRUCTIONS_PER_READ) throw new UnsupportedPattern(`with the patterns compiled before it, it comes to over ${MAX_INSTRUCTIONS_PER_READ} instructions`);
    } catch (err) {
      if (!(err instanceof UnsupportedPattern)) throw err;
      throw new UnsupportedPattern(`its pattern ${JSON.stringify(source.slice(0, 80))} is not one the gateway can match in linear time: ${err.message}`);
    }
    const automaton = new Automaton(program, meter);
    pattern = { test: (input) => automaton.matches(input), toString: () => key };
    compiled.set(key, pattern);
    return pattern;
  };
}

const isWordUnit = (unit: number) => (unit >= 48 && unit <= 57) || (unit >= 65 && unit <= 90) || (unit >= 97 && unit <= 122) || unit === 95;

/**
 * A program run over a string with every state it may be in kept at once (a Pike VM without
 * captures), so each character costs at most one step per instruction, however a backtracking
 * engine would retry. Walks the string by code point, as the `u` flag does. Its lists are
 * reused from one string to the next (one thread, and no check calls another).
 */
class Automaton {
  private readonly ops: Int32Array;
  private readonly args: Int32Array;
  private readonly args2: Int32Array;
  /** The mark of the position a state was last added at: each state is held once a position. */
  private readonly addedAt: Int32Array;
  private current: Int32Array;
  private next: Int32Array;
  private nextCount = 0;
  private readonly stack: Int32Array;
  /** What this string's positions are marked from: marks of earlier strings stay below it. */
  private markBase = 0;
  private steps = 0;
  private matched = false;

  constructor(
    private readonly program: PatternProgram,
    private readonly meter: PatternMeter,
  ) {
    ({ ops: this.ops, args: this.args, args2: this.args2 } = program);
    const size = program.ops.length;
    this.addedAt = new Int32Array(size);
    this.current = new Int32Array(size);
    this.next = new Int32Array(size);
    this.stack = new Int32Array(size);
  }

  /** Whether the program matches somewhere in `input`; throws PatternBudgetSpent past the meter's steps. */
  matches(input: string): boolean {
    const { matchers, anchored } = this.program;
    if (this.markBase > 0x7fffffff - input.length - 2) {
      this.addedAt.fill(0);
      this.markBase = 0;
    }
    const base = this.markBase + 1;
    this.markBase += input.length + 2;
    this.nextCount = 0;
    this.steps = 0;
    this.matched = false;
    const meter = this.meter;
    for (let pos = 0; ; ) {
      if (pos === 0 || !anchored) this.add(0, pos, base, input);
      if (this.matched) break;
      const current = this.next;
      const count = this.nextCount;
      this.next = this.current;
      this.current = current;
      this.nextCount = 0;
      if (pos >= input.length || (anchored && count === 0)) break;
      const codePoint = input.codePointAt(pos)!;
      const after = pos + (codePoint > 0xffff ? 2 : 1);
      for (let i = 0; i < count; i++) {
        const pc = current[i];
        const matcher = matchers[this.args[pc]];
        if (codePoint < 128 ? matcher.ascii[codePoint] === 1 : matcher.beyond(codePoint)) {
          this.add(pc + 1, after, base, input);
          if (this.matched) break;
        }
      }
      this.steps += count;
      if (this.matched) break;
      // Counted a character at a time: a check stops within one character's steps of its budget.
      if ((meter.stepsLeft -= this.steps) < 0) throw new PatternBudgetSpent();
      this.steps = 0;
      pos = after;
    }
    meter.stepsLeft -= this.steps;
    return this.matched;
  }

  /** Adds `start`, and every state reachable from it without a character, at `pos` to the next list. */
  private add(start: number, pos: number, base: number, input: string): void {
    const { ops, args, args2, addedAt, stack, next } = this;
    const mark = base + pos;
    let top = 0;
    stack[top++] = start;
    while (top > 0) {
      const pc = stack[--top];
      if (addedAt[pc] === mark) continue;
      addedAt[pc] = mark;
      this.steps++;
      switch (ops[pc]) {
        case Op.Char:
          next[this.nextCount++] = pc;
          break;
        case Op.Match:
          this.matched = true;
          return;
        case Op.Jump:
          stack[top++] = args[pc];
          break;
        case Op.Split:
          stack[top++] = args2[pc];
          stack[top++] = args[pc];
          break;
        case Op.Assert:
          if (holds(args[pc], input, pos)) stack[top++] = pc + 1;
          break;
      }
    }
  }
}
function holds(assertion: Assertion, input: string, pos: number): boolean {
  switch (assertion) {
    case Assertion.Start:
      return pos === 0;
    case Assertion.End:
      return pos === input.length;
    default: {
      const boundary = (pos > 0 && isWordUnit(input.charCodeAt(pos - 1))) !== (pos < input.length && isWordUnit(input.charCodeAt(pos)));
      return boundary === (assertion === Assertion.WordBoundary);
    }
  }
}
