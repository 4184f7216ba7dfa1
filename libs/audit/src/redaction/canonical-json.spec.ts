import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { argumentsDigest, canonicalJson } from './canonical-json.js';

describe('canonicalJson', () => {
  it('sorts object keys recursively and keeps array order', () => {
    const value = { b: 1, a: { z: [3, { y: 1, x: 2 }, 1], c: null }, '': 'empty' };
    expect(canonicalJson(value)).toBe('{"":"empty","a":{"c":null,"z":[3,{"x":2,"y":1},1]},"b":1}');
  });

  it('gives the same text whatever order the members were built in', () => {
    expect(canonicalJson({ a: 1, b: { c: 2, d: 3 } })).toBe(canonicalJson({ b: { d: 3, c: 2 }, a: 1 }));
  });

  it('sorts by UTF-16 code units, like RFC 8785', () => {
    expect(canonicalJson({ b: 1, B: 2, é: 3, '10': 4, '9': 5, '\u{1F600}': 6, '\uFFFD': 7 })).toBe(
      '{"10":4,"9":5,"B":2,"b":1,"é":3,"\u{1F600}":6,"\uFFFD":7}',
    );
  });

  it('drops undefined, functions and symbols from objects and writes null for them in arrays', () => {
    const value = { a: undefined, f: () => 1, s: Symbol('s'), list: [undefined, () => 1, Symbol('t'), 1] };
    expect(canonicalJson(value)).toBe('{"list":[null,null,null,1]}');
  });

  it('writes numbers, strings and non-finite numbers as JSON.stringify does', () => {
    const value = [0, -0, 1.5, 1e21, 1e-7, Number.NaN, Number.POSITIVE_INFINITY, 'a"b\\c\n\u0001\u2028', true, false];
    expect(canonicalJson(value)).toBe(JSON.stringify(value));
  });

  it('equals JSON.stringify for data whose keys are already sorted', () => {
    const text = '{"args":{"limit":10,"path":"/tmp","tags":["x","y"]},"name":"read_file","nested":[{"a":{"b":[]}}]}';
    expect(canonicalJson(JSON.parse(text))).toBe(text);
  });

  it('honours toJSON, as JSON.stringify does', () => {
    expect(canonicalJson({ at: new Date(Date.UTC(2024, 0, 2)) })).toBe('{"at":"2024-01-02T00:00:00.000Z"}');
  });

  it('writes a bigint as its digits', () => {
    expect(canonicalJson({ n: 12345678901234567890n })).toBe('{"n":12345678901234567890}');
  });

  it('gives null for a top-level value JSON cannot represent', () => {
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson(() => 1)).toBe('null');
  });

  it('writes a shared branch each time but throws on a cycle', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(TypeError);
  });

  it('finds a cycle however deep it starts, and writes deep shared branches each time', () => {
    const nest = (levels: number, leaf: unknown): unknown => (levels === 0 ? leaf : { n: nest(levels - 1, leaf) });
    const loop: unknown[] = [];
    loop.push({ back: loop });
    expect(() => canonicalJson(nest(100, loop))).toThrow(TypeError);
    const shared = nest(40, 1);
    const text = canonicalJson(nest(40, [shared, shared]));
    expect(JSON.parse(text)).toEqual(nest(40, [nest(40, 1), nest(40, 1)]));
  });
});

describe('argumentsDigest', () => {
  it('is sha256 over the canonical text, prefixed', () => {
    const expected = createHash('sha256').update('{"a":1,"b":"é"}').digest('hex');
    expect(argumentsDigest({ b: 'é', a: 1 })).toBe(`sha256:${expected}`);
    expect(argumentsDigest({ a: 1 })).toBe('sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862');
  });

  it('with a key is an HMAC, which differs per key', () => {
    const key = Buffer.alloc(32, 7);
    const expected = createHmac('sha256', key).update('{"a":1}').digest('hex');
    expect(argumentsDigest({ a: 1 }, key)).toBe(`hmac-sha256:${expected}`);
    expect(argumentsDigest({ a: 1 }, Buffer.alloc(32, 8))).not.toBe(argumentsDigest({ a: 1 }, key));
  });

  it('ignores member order and tells different values apart', () => {
    expect(argumentsDigest({ x: [1, 2], y: { p: 'q' } })).toBe(argumentsDigest({ y: { p: 'q' }, x: [1, 2] }));
    expect(argumentsDigest({ x: [1, 2] })).not.toBe(argumentsDigest({ x: [2, 1] }));
    expect(argumentsDigest({ x: '1' })).not.toBe(argumentsDigest({ x: 1 }));
  });
});
