/**
 * A JSON Schema `pattern` (ECMAScript syntax, the `u` flag ajv gives it) compiled to a program
 * for a Thompson-style automaton (pattern-matcher.ts), which checks a string in time linear in
 * its length whatever the pattern: JavaScript's own engine backtracks, and an upstream's pattern
 * such as ^\d*\d*\d*\d*\d*x$ against 200 digits would hold the daemon's one thread for seconds.
 *
 * What is parsed here is only the pattern's structure (sequences, alternatives, groups,
 * quantifiers, anchors, word boundaries); each atom that matches one character (a class, an
 * escape, `.`) is judged by JavaScript's own engine on that one character, so that `\p{L}`,
 * `[^\u0000-\u001f]` or `\s` mean exactly what they mean to ajv. A backreference or a
 * lookaround (no automaton has them) is Unsupported, as is a program over MAX_INSTRUCTIONS.
 */

/** A pattern this compiler does not take: the schema is then left unchecked, with this reason. */
export class UnsupportedPattern extends Error {}

/** Instructions a program may have: `[a-z]{2,63}` is about 130; each may cost a step per character checked. */
export const MAX_INSTRUCTIONS = 4_000;

export enum Op {
  /** Consumes one character that matchers[arg] accepts. */
  Char,
  /** Continues at both arg and arg2. */
  Split,
  Jump,
  /** Holds at this position only: arg is an Assertion. */
  Assert,
  Match,
}

export enum Assertion {
  Start,
  End,
  WordBoundary,
  NotWordBoundary,
}

/** Which characters an atom accepts: the ASCII ones from a table, the others asked of `beyond`. */
export interface CharMatcher {
  ascii: Uint8Array;
  beyond: (codePoint: number) => boolean;
}

export interface PatternProgram {
  ops: Int32Array;
  args: Int32Array;
  args2: Int32Array;
  matchers: CharMatcher[];
  /** Whether every match must begin at the string's start (`^...`): no later start is then tried. */
  anchored: boolean;
}

type Node =
  | { kind: 'char'; matcher: number }
  | { kind: 'seq'; items: Node[] }
  | { kind: 'alt'; options: Node[] }
  | { kind: 'repeat'; node: Node; min: number; max: number }
  | { kind: 'assert'; assertion: Assertion };

/** Compiles `source`; throws UnsupportedPattern, or the SyntaxError JavaScript itself gives it. */
export function compilePattern(source: string, flags: string): PatternProgram {
  if (flags !== 'u') throw new UnsupportedPattern(`its flags are "${flags}", not ajv's "u"`);
  // JavaScript's own parser first: the syntax is then known to be valid, and an invalid pattern
  // fails as it did before this compiler existed.
  new RegExp(source, flags);
  const parser = new Parser(source);
  const tree = parser.alternatives();
  const code: Code = { ops: [], args: [], args2: [] };
  emit(code, tree);
  push(code, Op.Match, 0);
  return { ops: Int32Array.from(code.ops), args: Int32Array.from(code.args), args2: Int32Array.from(code.args2), matchers: parser.matchers, anchored: startsAnchored(tree) };
}

function startsAnchored(node: Node): boolean {
  if (node.kind === 'assert') return node.assertion === Assertion.Start;
  if (node.kind === 'seq') return node.items.length > 0 && startsAnchored(node.items[0]);
  if (node.kind === 'alt') return node.options.every(startsAnchored);
  return false;
}

class Parser {
  readonly matchers: CharMatcher[] = [];
  private readonly bySource = new Map<string, number>();
  private at = 0;

  constructor(private readonly source: string) {}

  alternatives(): Node {
    const options = [this.sequence()];
    while (this.source[this.at] === '|') {
      this.at++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0] : { kind: 'alt', options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.at < this.source.length && this.source[this.at] !== '|' && this.source[this.at] !== ')') {
      items.push(this.quantified(this.atom()));
    }
    return { kind: 'seq', items };
  }

  private quantified(node: Node): Node {
    const s = this.source;
    let min: number;
    let max: number;
    const c = s[this.at];
    if (c === '*' || c === '+' || c === '?') {
      [min, max] = c === '*' ? [0, Infinity] : c === '+' ? [1, Infinity] : [0, 1];
      this.at++;
    } else if (c === '{') {
      // With the u flag a `{` after an atom is always a quantifier (else a SyntaxError, seen above).
      const bounds = /^\{(\d+)(,(\d*))?\}/.exec(s.slice(this.at, this.at + 40));
      if (!bounds) throw new UnsupportedPattern('it has a quantifier over 40 characters long');
      min = Number(bounds[1]);
      max = bounds[2] === undefined ? min : bounds[3] === '' ? Infinity : Number(bounds[3]);
      if (min > MAX_INSTRUCTIONS || (max !== Infinity && max > MAX_INSTRUCTIONS)) throw new UnsupportedPattern(`it repeats an atom over ${MAX_INSTRUCTIONS} times`);
      this.at += bounds[0].length;
    } else return node;
    if (s[this.at] === '?') this.at++; // lazy: the same strings match
    return { kind: 'repeat', node, min, max };
  }

  private atom(): Node {
    const s = this.source;
    const c = s[this.at];
    if (c === '^' || c === '$') {
      this.at++;
      return { kind: 'assert', assertion: c === '^' ? Assertion.Start : Assertion.End };
    }
    if (c === '(') return this.group();
    if (c === '.') return this.charAtom(this.at + 1);
    if (c === '[') {
      let end = this.at + 1;
      while (end < s.length && s[end] !== ']') end += s[end] === '\\' ? 2 : 1;
      return this.charAtom(end + 1);
    }
    if (c === '\\') return this.escape();
    const codePoint = s.codePointAt(this.at)!;
    this.at += codePoint > 0xffff ? 2 : 1;
    const ascii = new Uint8Array(128);
    if (codePoint < 128) ascii[codePoint] = 1;
    return { kind: 'char', matcher: this.matcher(String.fromCodePoint(codePoint), () => ({ ascii, beyond: (cp) => cp === codePoint })) };
  }

  private group(): Node {
    const s = this.source;
    this.at++;
    if (s[this.at] === '?') {
      const kind = s[this.at + 1];
      if (kind === ':') this.at += 2;
      else if (kind === '<' && s[this.at + 2] !== '=' && s[this.at + 2] !== '!') this.at = s.indexOf('>', this.at) + 1;
      else throw new UnsupportedPattern('it has a lookahead or lookbehind');
    }
    const inner = this.alternatives();
    this.at++; // the `)`
    return inner;
  }

  private escape(): Node {
    const s = this.source;
    const c = s[this.at + 1];
    if (c === 'b' || c === 'B') {
      this.at += 2;
      return { kind: 'assert', assertion: c === 'b' ? Assertion.WordBoundary : Assertion.NotWordBoundary };
    }
    if ((c >= '1' && c <= '9') || c === 'k') throw new UnsupportedPattern('it has a backreference');
    let end = this.at + 2;
    if (c === 'p' || c === 'P' || (c === 'u' && s[end] === '{')) end = s.indexOf('}', end) + 1;
    else if (c === 'u') {
      end += 4;
      // With the u flag, an escaped surrogate pair is one character.
      if (/^\\u[dD][89abAB]/.test(s.slice(this.at, end)) && /^\\u[dD][c-fC-F]/.test(s.slice(end, end + 6))) end += 6;
    } else if (c === 'x') end += 2;
    else if (c === 'c') end += 1;
    return this.charAtom(end);
  }

  /** The atom from here to `end`, which matches one character, judged by JavaScript's engine. */
  private charAtom(end: number): Node {
    const atom = this.source.slice(this.at, end);
    this.at = end;
    return {
      kind: 'char',
      matcher: this.matcher(atom, () => {
        const one = new RegExp(`^${atom}$`, 'u');
        const ascii = new Uint8Array(128);
        for (let cp = 0; cp < 128; cp++) ascii[cp] = one.test(String.fromCharCode(cp)) ? 1 : 0;
        return { ascii, beyond: (cp) => one.test(String.fromCodePoint(cp)) };
      }),
    };
  }

  private matcher(atom: string, make: () => CharMatcher): number {
    let index = this.bySource.get(atom);
    if (index === undefined) {
      index = this.matchers.push(make()) - 1;
      this.bySource.set(atom, index);
    }
    return index;
  }
}

/** A program while it is emitted. */
interface Code {
  ops: Op[];
  args: number[];
  args2: number[];
}

function push(program: Code, op: Op, arg: number, arg2 = 0): number {
  if (program.ops.length >= MAX_INSTRUCTIONS) throw new UnsupportedPattern(`it comes to over ${MAX_INSTRUCTIONS} instructions`);
  program.ops.push(op);
  program.args.push(arg);
  program.args2.push(arg2);
  return program.ops.length - 1;
}

function emit(program: Code, node: Node): void {
  switch (node.kind) {
    case 'char':
      push(program, Op.Char, node.matcher);
      return;
    case 'assert':
      push(program, Op.Assert, node.assertion);
      return;
    case 'seq':
      for (const item of node.items) emit(program, item);
      return;
    case 'alt': {
      const jumps: number[] = [];
      node.options.forEach((option, i) => {
        const last = i === node.options.length - 1;
        const split = last ? -1 : push(program, Op.Split, program.ops.length + 1);
        emit(program, option);
        if (!last) {
          jumps.push(push(program, Op.Jump, 0));
          program.args2[split] = program.ops.length;
        }
      });
      for (const jump of jumps) program.args[jump] = program.ops.length;
      return;
    }
    case 'repeat': {
      for (let i = 0; i < node.min; i++) emit(program, node.node);
      if (node.max === Infinity) {
        const split = push(program, Op.Split, program.ops.length + 1);
        emit(program, node.node);
        push(program, Op.Jump, split);
        program.args2[split] = program.ops.length;
        return;
      }
      const splits: number[] = [];
      for (let i = node.min; i < node.max; i++) {
        splits.push(push(program, Op.Split, program.ops.length + 1));
        emit(program, node.node);
      }
      for (const split of splits) program.args2[split] = program.ops.length;
    }
  }
}
