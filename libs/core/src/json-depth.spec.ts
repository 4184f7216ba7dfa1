import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';
import { nestsDeeperThan } from './json-depth.js';

/** `depth` arrays, one inside the other, around `inner`. */
const nested = (depth: number, inner: unknown = 1): unknown => {
  let value = inner;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

describe('nestsDeeperThan', () => {
  it('counts the levels of objects and arrays, not of scalars', () => {
    expect(nestsDeeperThan(1, 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({ a: { b: [1] } }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: { b: [1] } }, 2)).toBe(true);
    expect(nestsDeeperThan(nested(256), 256)).toBe(false);
    expect(nestsDeeperThan(nested(257), 256)).toBe(true);
  });

  it('answers for any depth without overflowing the stack', () => {
    expect(nestsDeeperThan(nested(200_000), 256)).toBe(true);
  });
});

describe('canonicalJson of a value nested past its limit', () => {
  it('writes a marker there instead of overflowing the stack', () => {
    const text = canonicalJson({ args: nested(20_000) });
    expect(text.startsWith('{"args":[[[')).toBe(true);
    expect(text).toContain('"[nested too deeply]"');
  });
});
