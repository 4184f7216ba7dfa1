/**
 * Percent-decoding for redaction: a URI's secrets (`Bearer%20…`, `token%3D…`) are found in
 * its decoded text, and replaced in the text as it is, through the map from decoded
 * positions back to the original ones.
 */

/** A percent-escape; a text without one has no second, decoded reading. */
export const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/;

/**
 * A stretch of a percent-decoded text and where it came from: a plain stretch maps character
 * for character, one decoded from escapes maps as a whole to its escapes (`%E2%82%AC` → '€').
 */
interface Stretch {
  /** In the decoded text. */
  from: number;
  to: number;
  /** In the original text. */
  origin: number;
  originEnd: number;
  plain: boolean;
}

interface Decoded {
  text: string;
  stretches: Stretch[];
}

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/**
 * `text` with its percent-escapes decoded once (a run of them as UTF-8; a byte that starts
 * no valid sequence becomes U+FFFD), and the map back. '+' stays '+': it means a space only
 * in form-encoded query strings, and a pattern that stops at a space would then find less.
 */
export function percentDecode(text: string): Decoded {
  const stretches: Stretch[] = [];
  let out = '';
  let plainStart = 0;
  let i = 0;
  const flushPlain = (end: number) => {
    if (end > plainStart) {
      stretches.push({ from: out.length, to: out.length + end - plainStart, origin: plainStart, originEnd: end, plain: true });
      out += text.slice(plainStart, end);
    }
  };
  while (i < text.length) {
    const escaped = text.charCodeAt(i) === 0x25 && isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2));
    if (!escaped) {
      i++;
      continue;
    }
    flushPlain(i);
    const runStart = i;
    const bytes: number[] = [];
    while (text.charCodeAt(i) === 0x25 && isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2))) {
      bytes.push(Number.parseInt(text.slice(i + 1, i + 3), 16));
      i += 3;
    }
    for (let k = 0; k < bytes.length; ) {
      const [codePoint, length] = utf8CodePoint(bytes, k);
      const chars = String.fromCodePoint(codePoint);
      // Both halves of a surrogate pair map to the whole sequence.
      for (let c = 0; c < chars.length; c++) {
        stretches.push({ from: out.length + c, to: out.length + c + 1, origin: runStart + 3 * k, originEnd: runStart + 3 * (k + length), plain: false });
      }
      out += chars;
      k += length;
    }
    plainStart = i;
  }
  flushPlain(text.length);
  return { text: out, stretches };
}

/** The code point of the UTF-8 sequence at bytes[k] and its length; U+FFFD and 1 if invalid. */
function utf8CodePoint(bytes: number[], k: number): [number, number] {
  const lead = bytes[k];
  if (lead < 0x80) return [lead, 1];
  let length: number;
  let min: number;
  let codePoint: number;
  if (lead >= 0xc2 && lead <= 0xdf) [length, min, codePoint] = [2, 0x80, lead & 0x1f];
  else if (lead >= 0xe0 && lead <= 0xef) [length, min, codePoint] = [3, 0x800, lead & 0x0f];
  else if (lead >= 0xf0 && lead <= 0xf4) [length, min, codePoint] = [4, 0x10000, lead & 0x07];
  else return [0xfffd, 1];
  if (k + length > bytes.length) return [0xfffd, 1];
  for (let j = 1; j < length; j++) {
    const next = bytes[k + j];
    if ((next & 0xc0) !== 0x80) return [0xfffd, 1];
    codePoint = (codePoint << 6) | (next & 0x3f);
  }
  if (codePoint < min || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return [0xfffd, 1];
  return [codePoint, length];
}

/** The stretch holding decoded position `at` (0 <= at < the decoded length). */
function stretchAt(stretches: Stretch[], at: number): Stretch {
  let lo = 0;
  let hi = stretches.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (stretches[mid].from <= at) lo = mid;
    else hi = mid - 1;
  }
  return stretches[lo];
}

/**
 * Maps a decoded [start, end) back onto the original text, widening it to whole escape
 * sequences, so that no byte of a found secret stays.
 */
export function originalSpan(decoded: Decoded, start: number, end: number): [number, number] {
  const length = decoded.text.length;
  const startOf = (at: number) => {
    if (at >= length) return decoded.stretches.at(-1)!.originEnd;
    const s = stretchAt(decoded.stretches, at);
    return s.plain ? s.origin + (at - s.from) : s.origin;
  };
  if (end <= start) {
    const at = startOf(start);
    return [at, at];
  }
  const last = stretchAt(decoded.stretches, end - 1);
  return [startOf(start), last.plain ? last.origin + (end - last.from) : last.originEnd];
}

export interface Span {
  start: number;
  end: number;
  marker: string;
}

/** Replaces the spans (in any order, possibly overlapping: merged, the earliest's marker kept). */
export function replaceSpans(text: string, spans: Span[]): string {
  if (spans.length === 0) return text;
  let out = '';
  let copied = 0;
  for (const span of mergeSpans(spans)) {
    out += text.slice(copied, span.start) + span.marker;
    copied = span.end;
  }
  return out + text.slice(copied);
}

/**
 * `spans` in order of their start, those that overlap (or start together) made one, which
 * keeps the marker of the first found. Sorts `spans` in place.
 */
export function mergeSpans(spans: Span[]): Span[] {
  if (spans.length <= 1) return spans;
  // Stable: at the same start, the span found first (in the text as it is) gives the marker.
  spans.sort((a, b) => a.start - b.start);
  const merged = [{ ...spans[0] }];
  for (let i = 1; i < spans.length; i++) {
    const next = spans[i];
    const current = merged[merged.length - 1];
    if (next.start < current.end || next.start === current.start) current.end = Math.max(current.end, next.end);
    else merged.push({ ...next });
  }
  return merged;
}
