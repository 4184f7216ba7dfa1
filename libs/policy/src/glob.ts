/** A glob compiled for matching: `test` says whether it matches a whole name or URI. */
export interface Glob {
  test(text: string): boolean;
}

const SLASH = 0x2f;
/** Position sets up to this length are kept between tests; longer texts get their own. */
const MAX_KEPT_POSITIONS = 4096;

/** A glob's parts: literal text, a run of any characters (`*`, `**`), or one character (`?`). */
type Part = { literal: string } | { run: true; crossesSlash: boolean } | { one: true; crossesSlash: boolean };

/**
 * A glob, anchored at both ends, so `github__*` never matches `my_github__x`. Everything
 * but the wildcards is literal.
 *
 * - `'uri'` (resource globs): `*` matches within one path segment (no `/`), `**` across
 *   segments, `?` one character of a segment.
 * - `'name'` (tool, prompt and server names): a name has no segments, so `*` (and `**`)
 *   match any run of characters and `?` any one, `/` included. An upstream may name a tool
 *   `danger/rm`: `deny: call, tool: "fs__danger*"` must still catch it.
 *
 * Not a RegExp: a host chooses the URI of a read, and a backtracking match of a glob with
 * two `**` and a `*` (a deny of any secrets directory's .pem files) against 200 kB of
 * `/secrets/x` took the daemon's one thread half a minute: the time grows with the URI's
 * length to the power of the number of wildcards. This match goes through the text once
 * per part of the glob.
 */
export function compileGlob(glob: string, kind: 'uri' | 'name'): Glob {
  const parts: Part[] = [];
  let literal = '';
  const flush = () => {
    if (literal !== '') parts.push({ literal });
    literal = '';
  };
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      const crossesSlash = kind === 'name' || glob[i + 1] === '*';
      if (glob[i + 1] === '*') i++;
      flush();
      const last = parts.at(-1);
      // Two runs in a row are one run (the wider of the two).
      if (last && 'run' in last) last.crossesSlash ||= crossesSlash;
      else parts.push({ run: true, crossesSlash });
    } else if (c === '?') {
      flush();
      parts.push({ one: true, crossesSlash: kind === 'name' });
    } else {
      literal += c;
    }
  }
  flush();
  if (parts.every((part) => 'literal' in part)) return { test: (text) => text === glob };
  return new PartsGlob(parts);
}

/**
 * Matches by the set of positions in the text each part can end at, one part at a time:
 * O(text length x glob length), whatever the text. A literal start or end is checked first,
 * which settles most names a glob does not match; the two position sets are kept for the
 * next test (globs are tested far more often than compiled, and one at a time).
 */
class PartsGlob implements Glob {
  private readonly prefix: string;
  private readonly suffix: string;
  /** The one run of a glob that is otherwise literal (at most a prefix and a suffix). */
  private readonly onlyRun?: { crossesSlash: boolean };
  private reach = new Uint8Array(64);
  private next = new Uint8Array(64);

  constructor(private readonly parts: readonly Part[]) {
    const first = parts[0];
    const last = parts.at(-1)!;
    this.prefix = 'literal' in first ? first.literal : '';
    this.suffix = 'literal' in last ? last.literal : '';
    const runs = parts.filter((part) => 'run' in part);
    if (runs.length === 1 && parts.length - 1 === Number(this.prefix !== '') + Number(this.suffix !== '')) this.onlyRun = runs[0];
  }

  test(text: string): boolean {
    if (!text.startsWith(this.prefix) || !text.endsWith(this.suffix)) return false;
    const n = text.length;
    if (this.onlyRun !== undefined) {
      // The usual shape, `github__*`, `file:///docs/**`, `*.pem`: the run is what lies between.
      if (n < this.prefix.length + this.suffix.length) return false;
      return this.onlyRun.crossesSlash || !text.slice(this.prefix.length, n - this.suffix.length).includes('/');
    }
    // Kept for the next test only while small: a long URI must not leave every glob holding its length twice.
    if (this.reach.length <= n && n < MAX_KEPT_POSITIONS) {
      this.reach = new Uint8Array(n + 1);
      this.next = new Uint8Array(n + 1);
    }
    const kept = this.reach.length > n;
    let reach = kept ? this.reach : new Uint8Array(n + 1);
    let next = kept ? this.next : new Uint8Array(n + 1);
    reach.fill(0, 0, n + 1);
    reach[0] = 1;
    for (let i = 0; i < this.parts.length; i++) {
      const part = this.parts[i];
      next.fill(0, 0, n + 1);
      let any = false;
      if ('literal' in part) {
        const end = n - part.literal.length;
        for (let p = 0; p <= end; p++) {
          if (reach[p] === 1 && text.startsWith(part.literal, p)) {
            next[p + part.literal.length] = 1;
            any = true;
          }
        }
      } else if ('one' in part) {
        for (let p = 0; p < n; p++) {
          if (reach[p] === 1 && (part.crossesSlash || text.charCodeAt(p) !== SLASH)) {
            next[p + 1] = 1;
            any = true;
          }
        }
      } else {
        // A run: from any position reached, every later one it can stretch to (not past a `/` within a segment).
        let open = false;
        for (let p = 0; p <= n; p++) {
          if (reach[p] === 1) open = true;
          if (open) {
            next[p] = 1;
            any = true;
          }
          if (!part.crossesSlash && text.charCodeAt(p) === SLASH) open = false;
        }
      }
      if (!any) return false;
      const done = reach;
      reach = next;
      next = done;
    }
    return reach[n] === 1;
  }
}
