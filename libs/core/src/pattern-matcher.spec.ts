import { describe, expect, it } from 'vitest';
import { linearPatternEngine, MAX_INSTRUCTIONS_PER_READ, PatternBudgetSpent } from './pattern-matcher.js';
import { UnsupportedPattern } from './pattern-program.js';

const PATTERNS = [
  '^\\d*\\d*\\d*\\d*\\d*x$', '.*a.*a.*a.*b', '^[a-z]+[a-z0-9]+[a-z]+$', '^(\\w+\\s?)*$', '^(a+)+$', '^\\p{L}+$', '^\\P{Lu}{2,}$',
  '^[\\u0041-\\u005a]{2,5}$', '^(?:[a-z0-9-]+\\.)+[a-z]{2,}$', 'a{2,4}', '^(a|b){1,5}$', '\\bfoo\\b', '\\Bo', '^(?<y>\\d{4})-\\d{2}$',
  'a*?b', '^$', '', 'x|', '(|a)+b', '^[^]*$', '[]', '^.$', '^\\u{1F600}$', '^\\uD83D\\uDE00$', '😀+', '^[😀-😂]$', '^\\S+@\\S+\\.\\S+$',
  '^\\/api\\/v\\d+$', '^[\\w.-]{1,64}$', 'ab|cd|ef', '(?:a*)*b', '^(?:(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)$',
  '\\x41\\cJ\\0', 'a$|^b', '(a|ab)(c|bcd)(d*)', '^[^\\s-]+-?$', '(?:^|,)a(?:,|$)',
];
const INPUTS = ['', 'foo', 'a foo b', 'foobar', 'mcp.example.com', '2024-01', 'x@y.z', '/api/v2', '255.1.0.99', '256.1.1.1', 'A\n\0', 'ABCD', 'Éé', 'abcd', 'b,a,c'];
/** Every string of up to three of these characters: where the patterns' corners are. */
const ALPHABET = ['a', 'b', '1', 'x', ' ', '.', '-', ',', '😀', 'É', '\n', '\uD83D'];
const shortStrings = (): string[] => {
  const out = [''];
  for (let length = 0, from = 0; length < 3; length++) {
    const to = out.length;
    for (let i = from; i < to; i++) for (const c of ALPHABET) out.push(out[i] + c);
    from = to;
  }
  return out;
};

describe('linearPatternEngine', () => {
  it('matches as JavaScript does, on every string of up to three characters and some longer ones', () => {
    const engine = linearPatternEngine({ stepsLeft: Infinity });
    const inputs = [...INPUTS, ...shortStrings()];
    for (const source of PATTERNS) {
      const ours = engine(source, 'u');
      const theirs = new RegExp(source, 'u');
      const disagreements = inputs.filter((input) => ours.test(input) !== theirs.test(input));
      expect({ source, disagreements }).toEqual({ source, disagreements: [] });
    }
  });

  it('takes steps linear in the string, where JavaScript takes polynomial or exponential time', () => {
    const stepsFor = (source: string, input: string) => {
      const meter = { stepsLeft: Number.MAX_SAFE_INTEGER };
      linearPatternEngine(meter)(source, 'u').test(input);
      return Number.MAX_SAFE_INTEGER - meter.stepsLeft;
    };
    for (const [source, unit] of [['^\\d*\\d*\\d*\\d*\\d*x$', '1'], ['.*a.*a.*a.*b', 'a'], ['^(\\w+\\s?)*$', 'ab '], ['^(a+)+$', 'a']]) {
      const once = stepsFor(source, `${unit.repeat(1_000)}!`);
      const tenfold = stepsFor(source, `${unit.repeat(10_000)}!`);
      expect({ source, ratio: Math.round(tenfold / once) }).toEqual({ source, ratio: 10 });
    }
  });

  it('stops with PatternBudgetSpent once the steps its meter holds are spent, and counts what it spent', () => {
    const meter = { stepsLeft: 1_000 };
    const digits = linearPatternEngine(meter)('^\\d+$', 'u');
    expect(digits.test('1'.repeat(100))).toBe(true);
    expect(meter.stepsLeft).toBeLessThan(1_000 - 100);
    expect(() => digits.test('1'.repeat(1_000))).toThrow(PatternBudgetSpent);
  });

  it('refuses what no automaton has, and programs past its limits, naming the pattern', () => {
    const engine = linearPatternEngine({ stepsLeft: Infinity });
    for (const [source, why] of [
      ['(a)\\1', 'a backreference'],
      ['(?<n>a)\\k<n>', 'a backreference'],
      ['a(?=b)', 'a lookahead or lookbehind'],
      ['(?<!a)b', 'a lookahead or lookbehind'],
      ['(a{100}){100}', 'over 4000 instructions'],
      ['a{5000}', 'over 4000 times'],
    ]) {
      expect(() => engine(source, 'u')).toThrow(UnsupportedPattern);
      expect(() => engine(source, 'u')).toThrow(`its pattern ${JSON.stringify(source)} is not one the gateway can match in linear time: it`);
      expect(() => engine(source, 'u')).toThrow(why);
    }
    expect(() => engine('a', '')).toThrow('its flags are "", not ajv\'s "u"');
    expect(() => engine('(', 'u')).toThrow(SyntaxError);
  });

  it(`holds at most ${MAX_INSTRUCTIONS_PER_READ} instructions over all the patterns of a read, and compiles each pattern once`, () => {
    const engine = linearPatternEngine({ stepsLeft: Infinity });
    const first = engine('[a-z]{1000}', 'u');
    expect(engine('[a-z]{1000}', 'u')).toBe(first);
    const many = () => {
      for (let n = 1_001; n < 1_200; n++) engine(`[a-z]{${n}}`, 'u');
    };
    expect(many).toThrow(`with the patterns compiled before it, it comes to over ${MAX_INSTRUCTIONS_PER_READ} instructions`);
  });
});
