import { describe, expect, it } from 'vitest';
import { blankJsoncExtras } from './jsonc.js';

describe('blankJsoncExtras', () => {
  it('blanks comments and trailing commas, keeping every offset and newline', () => {
    const text = '{\n  // servers\n  "a": [1, 2,], /* two\n lines */ "b": {"c": 3,},\n}';
    const plain = blankJsoncExtras(text);
    expect(plain).toHaveLength(text.length);
    expect(plain.split('\n')).toHaveLength(text.split('\n').length);
    expect(JSON.parse(plain)).toEqual({ a: [1, 2], b: { c: 3 } });
  });

  it('leaves what is inside strings alone, escaped quotes included', () => {
    const text = '{"url": "https://h/mcp", "q": "say \\"/* hi */\\",", "x": ",}"}';
    expect(blankJsoncExtras(text)).toBe(text);
  });

  it('keeps a comma that is not trailing, and leaves invalid JSON invalid', () => {
    expect(blankJsoncExtras('[1, // one\n 2]')).toBe('[1,       \n 2]');
    expect(() => JSON.parse(blankJsoncExtras('{"a": 1 "b": 2}'))).toThrow();
    expect(blankJsoncExtras('{"a": 1 /* open')).toBe('{"a": 1        ');
  });
});
