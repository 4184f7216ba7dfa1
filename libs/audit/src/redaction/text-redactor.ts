/**
 * The value patterns' half of redaction: finding secrets inside one string (the defaults as
 * one combined regex, the configured patterns, and the same again in a percent-decoded text)
 * and replacing them with their markers. Walking keys and structures is redactor.ts's.
 */
import { DEFAULT_VALUE_PATTERNS, SHORTEST_DEFAULT_MATCH, type SecretValuePattern } from './secret-patterns.js';
import { mergeSpans, originalSpan, percentDecode, PERCENT_ESCAPE, replaceSpans, type Span } from './percent-decoding.js';

/** The parts of RedactionOptions that concern text. */
export interface TextRedactionOptions {
  defaults?: boolean;
  patterns?: string[];
}

const CUSTOM_MARKER = '[REDACTED:custom]';
/** A configured key or pattern written as '/regex/flags'. */
export const SLASHED = /^\/(.+)\/([a-z]*)$/s;

/**
 * All default value patterns as one regex, one pass per string. Each alternative is wrapped
 * in a group named k<i> (which one matched gives the kind) and its secret group renamed s<i>.
 */
function combine(patterns: readonly SecretValuePattern[]) {
  const source = patterns
    .map((pattern, i) => `(?<k${i}>${pattern.source.replace('(?<secret>', `(?<s${i}>`)})`)
    .join('|');
  return {
    regex: new RegExp(source, 'g'),
    markers: patterns.map((pattern) => `[REDACTED:${pattern.kind}]`),
    kindGroups: patterns.map((_, i) => `k${i}`),
    secretGroups: patterns.map((_, i) => `s${i}`),
    verifiers: patterns.map((pattern) => pattern.verify),
  };
}

type CombinedPatterns = ReturnType<typeof combine>;

const DEFAULT_VALUES = combine(DEFAULT_VALUE_PATTERNS);
/** The patterns that follow a command to a later word: all a command line read from an argv array needs. */
const COMMAND_VALUES = combine(DEFAULT_VALUE_PATTERNS.filter((pattern) => pattern.command));
/** The default patterns for a text without a run of MIN_RUN token characters: no vendor token. */
const SHORT_RUN_VALUES = combine(DEFAULT_VALUE_PATTERNS.filter((pattern) => pattern.minRun === undefined));
const MIN_RUN = Math.min(...DEFAULT_VALUE_PATTERNS.map((pattern) => pattern.minRun ?? Infinity));

/**
 * Whether `text` has `min` or more characters of [A-Za-z0-9_=-] in a row. Looks at the last
 * character a run could end on and back from it only, so prose costs a test every ~30
 * characters: far less than the alternatives it spares the combined regex at each position.
 */
function hasTokenRun(text: string, min: number): boolean {
  for (let end = min - 1; end < text.length; ) {
    if (!isTokenChar(text.charCodeAt(end))) {
      end += min;
      continue;
    }
    let run = 1;
    while (run < min && isTokenChar(text.charCodeAt(end - run))) run++;
    if (run === min) return true;
    // The character before this run is no token character: no run of `min` spans it.
    end += min - run;
  }
  return false;
}

/** [A-Za-z0-9_=-] as a table: half the time of the comparisons it replaces. */
const TOKEN_CHARS = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_=-') TOKEN_CHARS[c.charCodeAt(0)] = 1;

function isTokenChar(code: number): boolean {
  return code < 128 && TOKEN_CHARS[code] === 1;
}

/** Receives a part of a text to replace: [start, end) and its marker. */
type SpanSink = (start: number, end: number, marker: string) => void;

/** Reports every default match's secret part, in order, without overlaps. */
function scanDefaults(text: string, sink: SpanSink): void {
  scanCombined(hasTokenRun(text, MIN_RUN) ? DEFAULT_VALUES : SHORT_RUN_VALUES, text, sink);
}

function scanCombined(patterns: CombinedPatterns, text: string, sink: SpanSink): void {
  const { regex, markers, kindGroups, secretGroups, verifiers } = patterns;
  regex.lastIndex = 0;
  for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
    const groups = match.groups!;
    let i = 0;
    while (groups[kindGroups[i]] === undefined) i++;
    const end = match.index + match[0].length;
    // The secret group ends the match (a pattern rule), so its start follows from its length.
    const secret = groups[secretGroups[i]];
    const verify = verifiers[i];
    if (verify !== undefined && !verify(secret ?? match[0])) {
      // Not a secret after all ("Basic information"): the other patterns look from the next character.
      regex.lastIndex = match.index + 1;
      continue;
    }
    sink(secret === undefined ? match.index : end - secret.length, end, markers[i]);
  }
}

/**
 * What the default patterns that follow a command to a later word find in a command line, in
 * order, without overlaps. The others need no line: they find a secret within one word, or
 * next to its label, which the items of an argv array show one by one.
 */
export function findCommandSecrets(line: string): Span[] {
  const spans: Span[] = [];
  scanCombined(COMMAND_VALUES, line, (start, end, marker) => spans.push({ start, end, marker }));
  return spans;
}

/**
 * What to search the command line an argv array stands for with: the default patterns that
 * follow a command (findCommandSecrets) and your own patterns, whose secrets may lie in a later
 * item than their command's name (`["acme-run", "--key", "X"]`); undefined when there are none.
 */
export function createCommandLineFinder(options: TextRedactionOptions): ((line: string) => Span[]) | undefined {
  const useDefaults = options.defaults !== false;
  const custom = (options.patterns ?? []).map(compileValuePattern);
  if (custom.length === 0) return useDefaults ? findCommandSecrets : undefined;
  return (line) => {
    const spans = useDefaults ? findCommandSecrets(line) : [];
    for (const regex of custom) scanMatches(line, regex, CUSTOM_MARKER, (start, end, marker) => spans.push({ start, end, marker }));
    return mergeSpans(spans);
  };
}

function redactDefaults(text: string): string {
  let out: string | undefined;
  let copied = 0;
  scanDefaults(text, (start, end, marker) => {
    out = (out ?? '') + text.slice(copied, start) + marker;
    copied = end;
  });
  return out === undefined ? text : out + text.slice(copied);
}

export function compileValuePattern(pattern: string): RegExp {
  const slashed = SLASHED.exec(pattern);
  if (slashed === null) return new RegExp(pattern, 'g');
  if (slashed[2].includes('y')) throw new Error("flag 'y' cannot be used");
  return new RegExp(slashed[1], `g${slashed[2].replace('g', '')}`);
}

/** Reports every non-empty match of a global regex (an empty one would mark nothing). */
function scanMatches(text: string, regex: RegExp, marker: string, sink: SpanSink): void {
  regex.lastIndex = 0;
  for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
    if (match[0] === '') {
      regex.lastIndex++;
      continue;
    }
    sink(match.index, match.index + match[0].length, marker);
  }
}

/** Replaces every non-empty match of a global regex. */
function replaceMatches(text: string, regex: RegExp, marker: string): string {
  let out: string | undefined;
  let copied = 0;
  scanMatches(text, regex, marker, (start, end) => {
    out = (out ?? '') + text.slice(copied, start) + marker;
    copied = end;
  });
  return out === undefined ? text : out + text.slice(copied);
}

export function createTextRedactor(options: TextRedactionOptions): (text: string) => string {
  const useDefaults = options.defaults !== false;
  const custom = (options.patterns ?? []).map(compileValuePattern);
  if (!useDefaults && custom.length === 0) return (text) => text;

  /**
   * The default and custom patterns' findings in the text as it is and as decoded, replaced
   * in the text as it is: a URI's `Bearer%20…` or `token%3D…` hides nothing.
   */
  function redactEscaped(text: string): string {
    const spans: Span[] = [];
    const add: SpanSink = (start, end, marker) => spans.push({ start, end, marker });
    if (useDefaults) scanDefaults(text, add);
    const decoded = percentDecode(text);
    const addDecoded: SpanSink = (start, end, marker) => {
      const [from, to] = originalSpan(decoded, start, end);
      spans.push({ start: from, end: to, marker });
    };
    if (useDefaults) scanDefaults(decoded.text, addDecoded);
    for (const regex of custom) scanMatches(decoded.text, regex, CUSTOM_MARKER, addDecoded);
    return replaceSpans(text, spans);
  }

  return (text) => {
    let out: string;
    if (text.includes('%') && PERCENT_ESCAPE.test(text)) out = redactEscaped(text);
    else out = useDefaults && text.length >= SHORTEST_DEFAULT_MATCH ? redactDefaults(text) : text;
    for (const regex of custom) out = replaceMatches(out, regex, CUSTOM_MARKER);
    return out;
  };
}
