/**
 * The Accept header (RFC 9110 section 12.5.1), as far as the MCP endpoints need it: whether a
 * client accepts a media type the gateway would answer with.
 */

/** One element of an Accept header: its media range, lowercased, and its weight. */
interface MediaRange {
  type: string;
  subtype: string;
  /** The element's `q`, 0 to 1; 1 when absent. */
  weight: number;
}

/**
 * Whether `accept` accepts `mediaType` (`type/subtype`, lowercase): the media ranges that
 * cover it (itself, `type/*`, `*\/*`) are looked at, the most specific wins (RFC 9110: "the
 * most specific reference has precedence"; of equally specific ones, the highest weight),
 * and its weight must not be 0, which means "not acceptable" (section 12.4.2). So
 * `*\/*, application/json;q=0` does not accept JSON. Parameters other than `q` do not
 * narrow a range: what the gateway sends is UTF-8 JSON or SSE whatever a client names.
 * No header accepts nothing here; callers that read its absence otherwise say so.
 */
export function accepts(accept: string | undefined, mediaType: string): boolean {
  if (!accept) return false;
  const [type, subtype] = mediaType.split('/');
  let best: { specificity: number; weight: number } | undefined;
  for (const range of mediaRanges(accept)) {
    const specificity = specificityFor(range, type, subtype);
    if (specificity < 0) continue;
    if (!best || specificity > best.specificity || (specificity === best.specificity && range.weight > best.weight)) {
      best = { specificity, weight: range.weight };
    }
  }
  return best !== undefined && best.weight > 0;
}

/** How specifically `range` names type/subtype: 2 exactly, 1 by `type/*`, 0 by `*\/*`; -1 not at all. */
function specificityFor(range: MediaRange, type: string, subtype: string): number {
  if (range.type === '*') return range.subtype === '*' ? 0 : -1;
  if (range.type !== type) return -1;
  if (range.subtype === '*') return 1;
  return range.subtype === subtype ? 2 : -1;
}

/** The header's elements that are media ranges; anything else in it is skipped. */
function mediaRanges(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const element of splitOutsideQuotes(accept, ',')) {
    const [range, ...params] = splitOutsideQuotes(element, ';');
    const slash = range.indexOf('/');
    if (slash <= 0 || slash === range.length - 1) continue;
    const type = range.slice(0, slash).trim().toLowerCase();
    const subtype = range.slice(slash + 1).trim().toLowerCase();
    ranges.push({ type, subtype, weight: weightOf(params) });
  }
  return ranges;
}

/** qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ) */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * The weight among an element's parameters: the first `q` (its name is case-insensitive).
 * One that is no qvalue (`q=high`, `q=1.5`) is read as 1, as before weights were read at
 * all: only a weight that says 0 takes an acceptance away.
 */
function weightOf(params: string[]): number {
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
    const value = unquoted(param.slice(eq + 1).trim());
    return QVALUE.test(value) ? Number(value) : 1;
  }
  return 1;
}

function unquoted(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value;
}

/** `text` split at `separator`, except inside a quoted string (a parameter's value may hold , and ;). */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === separator) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter((p) => p.length > 0);
}
