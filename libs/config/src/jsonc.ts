/**
 * JSON with comments and trailing commas (JSONC), the format of VS Code's mcp.json, made
 * plain JSON: each comment and trailing comma becomes spaces (newlines kept), so every
 * offset, and the line and column of a later syntax error, stay those of the file as written.
 */
export function blankJsoncExtras(text: string): string {
  const out: string[] = [];
  /** Where in `out` the last comma is, while only space and comments have followed it. */
  let comma = -1;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    const next = text[i + 1];
    let end = i + 1;
    if (ch === '"') {
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      end = Math.min(end + 1, text.length);
    } else if (ch === '/' && (next === '/' || next === '*')) {
      const close = next === '/' ? text.indexOf('\n', i) : text.indexOf('*/', i + 2) + 1;
      end = close <= 0 ? text.length : close + (next === '/' ? 0 : 1);
      out.push(text.slice(i, end).replace(/[^\r\n]/g, ' '));
      i = end;
      continue;
    } else if ((ch === '}' || ch === ']') && comma >= 0) {
      out[comma] = ' ';
    }
    if (ch === ',') comma = out.length;
    else if (!' \t\r\n'.includes(ch)) comma = -1;
    out.push(text.slice(i, end));
    i = end;
  }
  return out.join('');
}
