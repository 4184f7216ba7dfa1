import { describe, expect, it } from 'vitest';
import { LineSplitter } from './line-splitter.js';

const split = (chunks: string[]) => {
  const s = new LineSplitter();
  const lines: string[] = [];
  for (const c of chunks) s.push(c, (l) => lines.push(l));
  return lines;
};

describe('LineSplitter', () => {
  it('yields complete lines only, across chunk boundaries', () => {
    expect(split(['{"a"', ':1}\n{"b":2}\n{"c"', ':3}'])).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('skips blank lines and accepts CRLF', () => {
    expect(split(['\n\r\n{"a":1}\r\n', '\n'])).toEqual(['{"a":1}']);
  });

  it('joins a long line arriving in many pieces', () => {
    const big = 'x'.repeat(100_000);
    const chunks = big.match(/.{1,1000}/g)!;
    expect(split([...chunks, '\n'])).toEqual([big]);
  });
});
