/**
 * A glob as a RegExp, anchored at both ends, so `github__*` never matches `my_github__x`.
 * Everything but the wildcards is literal.
 *
 * - `'uri'` (resource globs): `*` matches within one path segment (no `/`), `**` across
 *   segments, `?` one character of a segment.
 * - `'name'` (tool, prompt and server names): a name has no segments, so `*` (and `**`)
 *   match any run of characters and `?` any one, `/` included. An upstream may name a tool
 *   `danger/rm`: `deny: call, tool: "fs__danger*"` must still catch it.
 */
export function globToRegExp(glob: string, kind: 'uri' | 'name'): RegExp {
  const one = kind === 'uri' ? '[^/]' : '.';
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (c === '*') source += `${one}*`;
    else if (c === '?') source += one;
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}
