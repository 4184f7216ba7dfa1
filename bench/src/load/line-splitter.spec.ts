import { describe, expect, it } from 'vitest';
import { LineSplitter } from './line-splitter.js';

describe('LineSplitter', () => {
  it('joins lines split across chunks and splits several lines in one chunk', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    splitter.push('{"a":');
    splitter.push('1}\n{"b":2}\n{"c"');
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    splitter.push(':3}\r\n\n');
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });
});
