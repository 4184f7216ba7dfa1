/**
 * A name or URI glob as a RegExp: `*` matches within one path segment (no `/`), `**`
 * across segments, `?` one character of a segment; everything else is literal. Anchored at
 * both ends, so `github__*` never matches `my_github__x`.
 */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}
