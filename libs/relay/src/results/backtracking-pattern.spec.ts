import { describe, expect, it } from 'vitest';
import { backtrackingPatternIn, mayBacktrackBadly } from './backtracking-pattern.js';

describe('mayBacktrackBadly', () => {
  it.each([
    '^(a+)+$',
    '^(a|aa)*$',
    '(a|a)*',
    '^(a|ab)*$',
    '(\\w+\\s?)*$',
    '(\\w+\\s?)+',
    '(.*a){12}',
    '^(a{1,3}){2,}$',
    '((ab)*)+',
    '^(.*)\\1$',
    '(?<x>a)\\k<x>',
    '^(?:a+)+$',
    // The last character is no separator when something before it in the group can match it too...
    '^(?:[a-z.]+\\.)+$',
    '^(?:a[a.]*\\.)+$',
    '^(?:\\w+_)+$',
    '^(?:\\S+\\.)+$',
    '^(?:[^,]+,)+$',
    '^(?:[\\d.]+\\.)+$',
    // [+-.] is + , - and .: a range that holds the separator.
    '^(?:[+-.]+,)+$',
    // ...or it is quantified, an alternative's, a group, an assertion.
    '^(?:[a-z]+\\.?)+$',
    '^(?:[a-z]+|\\.)+$',
    '^(?:a+\\.|b)+$',
    '^(?:a+(?:\\.))+$',
    '^(?:a+\\b)+$',
    '^((?:[a-z]+\\.)+)+$',
    '^(?:/a*/)+$',
    '^(?:\\p{L}+\\.)+$',
  ])('takes %s for one', (source) => {
    expect(mayBacktrackBadly(source)).toBe(true);
  });

  it.each([
    '^[a-z]+$',
    '^\\d{3}-\\d{4}$',
    '^(ab)+$',
    '^(?:foo|bar)$',
    '[(a+)+]',
    '\\(a+\\)+',
    '^[A-Z][a-z]*( [A-Z][a-z]*)?$',
    '^\\\\(a)+$',
    // Repetitions split by a character nothing else in the group matches: one way to split.
    '^(?:[a-z0-9-]+\\.)+[a-z]{2,}$',
    '^(?:\\d{1,3}\\.){3}\\d{1,3}$',
    '^([a-z]+,)*[a-z]+$',
    '^(?:[A-Za-z0-9_]+/)*[A-Za-z0-9_]+$',
    '^(?:/[a-z0-9_-]+)+/?$',
    '^(?<label>\\w+:)+$',
    '^(?:(?:foo|bar)\\.)+$',
    '^(?:[a-z]+[0-9]*;)*$',
    '^(?:[\\w-]+\\.)+$',
    '^(?:[a-z]+@)+$',
  ])('does not take %s for one', (source) => {
    expect(mayBacktrackBadly(source)).toBe(false);
  });
});

describe('backtrackingPatternIn', () => {
  it('finds a pattern or patternProperties key anywhere in a schema, and nothing in a schema without one', () => {
    const nested = { type: 'object', properties: { list: { type: 'array', items: [{ type: 'string', pattern: '^(a+)+$' }] } } };
    expect(backtrackingPatternIn(nested)).toBe('^(a+)+$');
    expect(backtrackingPatternIn({ type: 'object', patternProperties: { '^(x|xx)+$': {} } })).toBe('^(x|xx)+$');
    // A property named "pattern" is a schema, not a regular expression.
    expect(backtrackingPatternIn({ type: 'object', properties: { pattern: { type: 'string', pattern: '^[a-z]+$' } } })).toBeUndefined();
  });
});
