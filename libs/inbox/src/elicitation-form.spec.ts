import { describe, expect, it } from 'vitest';
import { elicitationContentProblems, elicitationSchemaProblems } from './elicitation-form.js';
import { PATTERN_INPUT_LIMIT } from './string-pattern.js';

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

  it('refuses, without hanging, an answer a backtracking pattern would take for ever on, and one too long to check', () => {
    const evil = form({ pattern: '^(a+)+$' });
    expect(elicitationSchemaProblems(evil)).toEqual([]);
    const started = Date.now();
    expect(elicitationContentProblems(evil, { code: `${'a'.repeat(40)}!` })).toEqual(['code could not be checked against its pattern in time']);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(elicitationContentProblems(evil, { code: 'aaa' })).toEqual([]);
    expect(elicitationContentProblems(form({ pattern: 'a' }), { code: 'a'.repeat(PATTERN_INPUT_LIMIT + 1) })).toEqual([
      `code must be at most ${PATTERN_INPUT_LIMIT} characters to be checked against its pattern`,
    ]);
  });

  it('checks a format and a pattern together', () => {
    const mail = form({ format: 'email', pattern: '@example\\.com$' });
    expect(elicitationContentProblems(mail, { code: 'dana@example.com' })).toEqual([]);
    expect(elicitationContentProblems(mail, { code: 'dana@elsewhere.org' })).toEqual(['code must match the pattern @example\\.com$']);
    expect(elicitationContentProblems(mail, { code: 'nope' })).toEqual(['code must be a valid email']);
  });
});
