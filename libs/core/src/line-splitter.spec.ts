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

  describe('with a limit', () => {
    const limited = (maxLength: number, chunks: string[]) => {
      const overflows: number[] = [];
      const s = new LineSplitter({ maxLength, onOverflow: (length) => overflows.push(length) });
      const lines: string[] = [];
      for (const c of chunks) s.push(c, (l) => lines.push(l));
      return { lines, overflows };
    };

    it('accepts a line of exactly the limit, across chunks', () => {
      expect(limited(5, ['ab', 'cde\n'])).toEqual({ lines: ['abcde'], overflows: [] });
    });

    it('drops a line over the limit, reporting it once, and goes on after its newline', () => {
      expect(limited(5, ['ok\nabc', 'def', 'ghi', 'jkl\nnext\n'])).toEqual({ lines: ['ok', 'next'], overflows: [6] });
    });

    it('drops a long line that arrives whole in one chunk', () => {
      expect(limited(5, ['abcdefgh\nnext\n'])).toEqual({ lines: ['next'], overflows: [8] });
    });

    it('holds no more than the limit of a line that never ends', () => {
      const overflows: number[] = [];
      const s = new LineSplitter({ maxLength: 1000, onOverflow: (length) => overflows.push(length) });
      const chunk = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 100; i++) s.push(chunk, () => expect.fail('no line expected'));
      expect(overflows).toEqual([chunk.length]);
      expect((s as unknown as { pieces: string[] }).pieces).toEqual([]);
    });
  });
});
