import { describe, expect, it } from 'vitest';
import { jsonErrorOffset, lineColumn } from './json-syntax.js';

/** V8's own position, on the messages that still carry one. */
function v8Offset(text: string): number | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    const match = /at position (\d+)/.exec((err as Error).message);
    return match ? Number(match[1]) : undefined;
  }
}

describe('jsonErrorOffset', () => {
  it('returns undefined for valid JSON', () => {
    for (const text of ['{}', ' [1, -2.5e3, "a\\u00e9\\n", true, false, null, {"k": []}] ', '"x"', '0']) {
      expect(jsonErrorOffset(text)).toBeUndefined();
    }
  });

  it.each([
    ['{"a":1,}', 7],
    ['{a:1}', 1],
    ['{"a":1', 6],
    ['{"a":1} x', 8],
    ['{"a" 1}', 5],
    ['{"a": "x\ny"}', 8],
    ['{"a": 01}', 7],
  ])('agrees with V8 where V8 gives a position: %j', (text, offset) => {
    expect(v8Offset(text)).toBe(offset);
    expect(jsonErrorOffset(text)).toBe(offset);
  });

  it.each([
    ['{"a": }', 6],
    ['[1,2,]', 5],
    ['{"a": tru}', 9],
    ['// comment\n{}', 0],
    ['', 0],
  ])('finds the offending character where V8 does not say: %j', (text, offset) => {
    expect(jsonErrorOffset(text)).toBe(offset);
  });
});

describe('lineColumn', () => {
  it('is 1-based', () => {
    expect(lineColumn('ab\ncd', 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });
});
