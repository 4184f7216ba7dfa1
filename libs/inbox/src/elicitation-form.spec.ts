import { describe, expect, it } from 'vitest';
import { elicitationContentProblems, elicitationSchemaProblems } from './elicitation-form.js';
import { PATTERN_INPUT_LIMIT, PATTERN_STEPS_PER_FORM } from './string-pattern.js';

const form = (code: Record<string, unknown>) => ({ type: 'object', properties: { code: { type: 'string', ...code } } });

describe('a string field with a pattern', () => {
  it('takes only an answer the pattern matches, as an unanchored ECMAScript regular expression with the u flag', () => {
    const digits = form({ pattern: '^[0-9]{4}$' });
    expect(elicitationSchemaProblems(digits)).toEqual([]);
    expect(elicitationContentProblems(digits, { code: '1234' })).toEqual([]);
    expect(elicitationContentProblems(digits, { code: 'not digits' })).toEqual(['code must match the pattern ^[0-9]{4}$']);
    expect(elicitationContentProblems(digits, { code: '12345' })).toEqual(['code must match the pattern ^[0-9]{4}$']);
    // Unanchored: a pattern matches anywhere unless it anchors itself.
    expect(elicitationContentProblems(form({ pattern: '[0-9]' }), { code: 'room 7' })).toEqual([]);
    // With the u flag, \p{...} is a Unicode property and a surrogate pair is one character.
    expect(elicitationContentProblems(form({ pattern: '^\\p{Lu}.$' }), { code: 'É😀' })).toEqual([]);
  });

  it('refuses at ask time a schema whose pattern is not a regular expression', () => {
    expect(elicitationSchemaProblems(form({ pattern: '([a-z' }))).toEqual(['properties.code.pattern must be a regular expression (ECMAScript, with the u flag)']);
    expect(elicitationSchemaProblems(form({ pattern: 42 }))).toEqual(['properties.code.pattern must be a regular expression (ECMAScript, with the u flag)']);
    // Valid without the u flag, not with it (an identity escape).
    expect(elicitationSchemaProblems(form({ pattern: '\\_' }))).toHaveLength(1);
  });

  it('answers an answer a backtracking pattern would take for ever on, with the linear-time engine, and refuses one too long to check', () => {
    const evil = form({ pattern: '^(a+)+$' });
    expect(elicitationSchemaProblems(evil)).toEqual([]);
    // JavaScript's engine takes about 2^40 steps to refuse this; a node:vm timeout refused it unchecked.
    expect(elicitationContentProblems(evil, { code: `${'a'.repeat(40)}!` })).toEqual(['code must match the pattern ^(a+)+$']);
    expect(elicitationContentProblems(evil, { code: 'aaa' })).toEqual([]);
    // Polynomial for a backtracking engine (some 10^14 steps for 4,096 digits), linear here: both are answered.
    const digits = form({ pattern: '^\\d*\\d*\\d*\\d*\\d*x$' });
    expect(elicitationContentProblems(digits, { code: '1'.repeat(PATTERN_INPUT_LIMIT) })).toEqual(['code must match the pattern ^\\d*\\d*\\d*\\d*\\d*x$']);
    expect(elicitationContentProblems(digits, { code: `${'1'.repeat(PATTERN_INPUT_LIMIT - 1)}x` })).toEqual([]);
    expect(elicitationContentProblems(form({ pattern: 'a' }), { code: 'a'.repeat(PATTERN_INPUT_LIMIT + 1) })).toEqual([
      `code must be at most ${PATTERN_INPUT_LIMIT} characters to be checked against its pattern`,
    ]);
  });

  it('asks a form whose pattern the linear-time engine does not run, and leaves its answers unmatched rather than backtrack', () => {
    const problems = (pattern: string) => elicitationSchemaProblems(form({ pattern }));
    const unrun = ['^(a)\\1$', '^(?=.*[A-Z])(?=.*\\d).{8,}$', 'a{5000}', `${'(?:'.repeat(5000)}a${')'.repeat(5000)}`, `^${'[a-z]'.repeat(250)}$`];
    for (const pattern of unrun) {
      expect(problems(pattern)).toEqual([]);
      expect(elicitationContentProblems(form({ pattern }), { code: 'anything' })).toEqual([]);
    }
    // A pattern that is no regular expression is still refused, and its answers too.
    expect(elicitationContentProblems(form({ pattern: '([a-z' }), { code: 'b' })).toEqual([
      'code cannot be checked: its pattern must be a regular expression (ECMAScript, with the u flag)',
    ]);
  });

  it(`refuses an answer whose pattern checks would take more than ${PATTERN_STEPS_PER_FORM} steps, the same on any machine`, () => {
    // Unanchored, [a-z]{1000} is tried from every position: on 1,000 letters some 500,000 steps a field.
    const properties = { f0: { type: 'string', pattern: '[a-z]{1000}' }, f1: { type: 'string', pattern: '[a-z]{1000}' }, f2: { type: 'string', pattern: '[a-z]{1000}' } };
    const schema = { type: 'object', properties };
    expect(elicitationSchemaProblems(schema)).toEqual([]);
    const letters = 'a'.repeat(1000);
    const spent = (name: string) => `${name} could not be checked against its pattern within the 1,000,000 steps one answer may take`;
    expect(elicitationContentProblems(schema, { f0: letters, f1: letters, f2: letters })).toEqual([spent('f1'), spent('f2')]);
    expect(elicitationContentProblems(schema, { f0: letters })).toEqual([]);
  });

  it('checks a format and a pattern together', () => {
    const mail = form({ format: 'email', pattern: '@example\\.com$' });
    expect(elicitationContentProblems(mail, { code: 'dana@example.com' })).toEqual([]);
    expect(elicitationContentProblems(mail, { code: 'dana@elsewhere.org' })).toEqual(['code must match the pattern @example\\.com$']);
    expect(elicitationContentProblems(mail, { code: 'nope' })).toEqual(['code must be a valid email']);
  });
});
