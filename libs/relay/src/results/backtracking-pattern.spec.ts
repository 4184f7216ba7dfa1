import { describe, expect, it } from 'vitest';
import { backtrackingPatternIn, mayBacktrackBadly } from './backtracking-pattern.js';

describe('mayBacktrackBadly', () => {
  it.each(['^(a+)+$', '^(a|aa)*$', '(\\w+\\s?)*$', '^(a{1,3}){2,}$', '((ab)*)+', '^(.*)\\1$', '(?<x>a)\\k<x>', '^(?:a+)+$'])('takes %s for one', (source) => {
    expect(mayBacktrackBadly(source)).toBe(true);
  });

  it.each(['^[a-z]+$', '^\\d{3}-\\d{4}$', '^(ab)+$', '^(?:foo|bar)$', '[(a+)+]', '\\(a+\\)+', '^[A-Z][a-z]*( [A-Z][a-z]*)?$', '^\\\\(a)+$'])('does not take %s for one', (source) => {
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
