/**
 * Finds the offset of the first JSON syntax error. Node 20's JSON.parse often reports only
 * "Unexpected token '}'" with no position, which is useless in a long file; this scanner
 * follows the same grammar (RFC 8259) so it stops where JSON.parse gave up.
 * Returns undefined when the text is valid JSON.
 */
export function jsonErrorOffset(text: string): number | undefined {
  let i = 0;

  class Stop {}
  const fail = (): never => {
    throw new Stop();
  };
  const skipSpace = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const expect = (ch: string) => {
    if (text[i] !== ch) fail();
    i++;
  };

  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const HEX4 = /[0-9a-fA-F]{4}/y;

  const string = () => {
    expect('"');
    for (;;) {
      if (i >= text.length) fail();
      const ch = text[i]!;
      if (ch === '"') return void i++;
      if (ch.charCodeAt(0) < 0x20) fail();
      if (ch !== '\\') {
        i++;
        continue;
      }
      i++;
      const esc = text[i];
      if (esc !== undefined && '"\\/bfnrt'.includes(esc)) i++;
      else if (esc === 'u') {
        HEX4.lastIndex = i + 1;
        if (!HEX4.test(text)) fail();
        i += 5;
      } else fail();
    }
  };

  const value = (): void => {
    skipSpace();
    const ch = text[i];
    if (ch === '{') return members('}', () => {
      skipSpace();
      string();
      skipSpace();
      expect(':');
      value();
    });
    if (ch === '[') return members(']', value);
    if (ch === '"') return string();
    for (const word of ['true', 'false', 'null']) {
      if (ch !== word[0]) continue;
      // Stop inside a misspelt literal where JSON.parse does: `tru}` fails at the `}`.
      for (const expected of word) expect(expected);
      return;
    }
    NUMBER.lastIndex = i;
    if (!NUMBER.test(text)) fail();
    i = NUMBER.lastIndex;
  };

  const members = (close: string, member: () => void) => {
    i++;
    skipSpace();
    if (text[i] === close) return void i++;
    for (;;) {
      member();
      skipSpace();
      if (text[i] === ',') {
        i++;
        continue;
      }
      return expect(close);
    }
  };

  try {
    value();
    skipSpace();
    if (i < text.length) fail();
    return undefined;
  } catch (err) {
    if (err instanceof Stop) return i;
    throw err;
  }
}

/**
 * The offset of the first `{` or `[` that opens a level deeper than `max` (the outermost is
 * level 1), outside strings; undefined when there is none. A loop, not recursion, so it is
 * safe on any input, valid or not.
 */
export function jsonNestingOffset(text: string, max: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') {
      if (++depth > max) return i;
    } else if (ch === '}' || ch === ']') depth = Math.max(0, depth - 1);
  }
  return undefined;
}

/** 1-based line and column of an offset, as editors show them. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}
