import {
  DEFAULT_SECRET_KEYS,
  DEFAULT_VALUE_PATTERNS,
  SHORTEST_DEFAULT_MATCH,
  type SecretValuePattern,
} from './secret-patterns.js';

export interface RedactionOptions {
  /** Use the built-in defaults (true unless set false). */
  defaults?: boolean;
  /**
   * Extra key names: matched case-insensitively against object keys, ignoring '-', '_', '.'
   * (and whitespace), so 'apiKey', 'api_key', 'API-KEY' are the same. A plain string matches
   * when the normalized key CONTAINS it; a string of the form '/regex/flags' is a regex tested
   * against the original key.
   */
  keys?: string[];
  /**
   * Extra value patterns: regex sources (compiled with the 'g' flag; with 'i' too when written
   * '/src/i'); every match inside any string value is replaced by '[REDACTED:custom]'.
   */
  patterns?: string[];
}

export interface Redactor {
  /**
   * `value` with secrets replaced. Values under a secret key become '[REDACTED]' (whatever
   * their type; an undefined member stays undefined); substrings matching a value pattern
   * become `[REDACTED:<kind>]`; in an array, a string after a secret flag ('--password', 'x')
   * becomes '[REDACTED]' too. A repeated ancestor (a cycle) becomes '[Circular]', nesting
   * deeper than 1000 levels '[Truncated]'. Never mutates the input, never throws on non-JSON
   * values (undefined, functions, bigint, symbols are returned as they are).
   *
   * Copy-on-write: when nothing is redacted the input itself is returned, and a changed
   * structure shares its unchanged branches with the input. The result must therefore be
   * treated as read-only, like the input (the audit log serializes it at once).
   */
  redact(value: unknown): unknown;
  /** Applies only the value patterns to a free text (an error message, a log line). */
  redactText(text: string): string;
}

const REDACTED = '[REDACTED]';
const CIRCULAR = '[Circular]';
const TRUNCATED = '[Truncated]';
const CUSTOM_MARKER = '[REDACTED:custom]';
// Far deeper than real arguments, well within the call stack (two frames per level).
const MAX_DEPTH = 1000;
// Object keys come from the host: the per-redactor cache of key decisions must stay bounded.
const MAX_CACHED_KEYS = 4096;
const MAX_CACHED_KEY_LENGTH = 128;

const SLASHED = /^\/(.+)\/([a-z]*)$/s;
/** A command-line flag without its value; its name is then judged like an object key. */
const FLAG = /^--?[A-Za-z][\w.-]*$/;
const KEY_SEPARATORS = /[-_.\s]/g;

/** The problems in `options` (invalid regexes, unusable entries); [] when it is fine. */
export function checkRedactionOptions(options: RedactionOptions): string[] {
  const problems: string[] = [];
  for (const key of options.keys ?? []) {
    if (typeof key !== 'string' || normalizeKey(key) === '') {
      problems.push(`redaction key ${JSON.stringify(key)}: must be a non-empty name or /regex/`);
      continue;
    }
    const problem = compileProblem(() => compileKeyRule(key));
    if (problem !== undefined) problems.push(`redaction key ${key}: ${problem}`);
  }
  for (const pattern of options.patterns ?? []) {
    if (typeof pattern !== 'string' || pattern === '') {
      problems.push(`redaction pattern ${JSON.stringify(pattern)}: must be a non-empty regex`);
      continue;
    }
    const problem = compileProblem(() => {
      // A pattern matching nothing would insert a marker between every two characters.
      if (compileValuePattern(pattern).test('')) throw new Error('matches the empty string');
    });
    if (problem !== undefined) problems.push(`redaction pattern ${pattern}: ${problem}`);
  }
  return problems;
}

/** Compiles the options once; throws an Error listing every problem checkRedactionOptions finds. */
export function createRedactor(options: RedactionOptions = {}): Redactor {
  const problems = checkRedactionOptions(options);
  if (problems.length > 0) throw new Error(`invalid redaction options: ${problems.join('; ')}`);
  const isSecretKey = createKeyMatcher(options);
  const redactText = createTextRedactor(options);

  function redactValue(value: unknown, seen: Map<object, unknown>, depth: number): unknown {
    if (typeof value === 'string') return redactText(value);
    if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
    const known = seen.get(value);
    if (known !== undefined) return known === IN_PROGRESS ? CIRCULAR : known;
    if (depth >= MAX_DEPTH) return TRUNCATED;
    seen.set(value, IN_PROGRESS);
    const result = Array.isArray(value)
      ? redactArray(value, seen, depth + 1)
      : redactRecord(value as Record<string, unknown>, seen, depth + 1);
    // Remembered, so a shared (not cyclic) branch is walked once and copied once.
    seen.set(value, result);
    return result;
  }

  /** Also an argv array: the value after a secret flag (['--password', 'x']) is redacted too. */
  function redactArray(array: unknown[], seen: Map<object, unknown>, depth: number): unknown[] {
    let copy: unknown[] | undefined;
    let afterSecretFlag = false;
    for (let i = 0; i < array.length; i++) {
      const item = array[i];
      const redacted =
        afterSecretFlag && typeof item === 'string' && !item.startsWith('-') ? REDACTED : redactValue(item, seen, depth);
      afterSecretFlag = typeof item === 'string' && FLAG.test(item) && isSecretKey(item);
      if (copy === undefined) {
        if (Object.is(redacted, item)) continue;
        copy = array.slice(0, i);
      }
      copy.push(redacted);
    }
    return copy ?? array;
  }

  function redactRecord(record: Record<string, unknown>, seen: Map<object, unknown>, depth: number): unknown {
    let copy: Record<string, unknown> | undefined;
    const keys = Object.keys(record);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const item = record[key];
      let redacted: unknown;
      if (isSecretKey(key)) redacted = item === undefined ? undefined : REDACTED;
      else redacted = redactValue(item, seen, depth);
      if (copy === undefined) {
        if (Object.is(redacted, item)) continue;
        copy = {};
        for (let j = 0; j < i; j++) setOwn(copy, keys[j], record[keys[j]]);
      }
      setOwn(copy, key, redacted);
    }
    return copy ?? record;
  }

  return {
    redact: (value) => redactValue(value, typeof value === 'object' && value !== null ? new Map() : NO_SEEN, 0),
    redactText,
  };
}

const IN_PROGRESS = Symbol('in progress');
// Primitives never touch the map; this spares the allocation for a top-level string.
const NO_SEEN = new Map<object, unknown>();

/** Assigns an own property, also for a key named '__proto__' (which JSON.parse creates as data). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

function normalizeKey(key: string): string {
  return key.toLowerCase().replace(KEY_SEPARATORS, '');
}

type KeyRule = { contains: string } | { regex: RegExp };

function compileKeyRule(key: string): KeyRule {
  const slashed = SLASHED.exec(key);
  if (slashed === null) return { contains: normalizeKey(key) };
  // 'g' and 'y' make test() stateful, which would make a key match every other time.
  return { regex: new RegExp(slashed[1], slashed[2].replace(/[gy]/g, '')) };
}

function createKeyMatcher(options: RedactionOptions): (key: string) => boolean {
  const defaults = options.defaults === false ? undefined : DEFAULT_KEY_REGEX;
  const rules = (options.keys ?? []).map(compileKeyRule);
  if (defaults === undefined && rules.length === 0) return () => false;
  const decide = (key: string): boolean => {
    const normalized = normalizeKey(key);
    if (defaults?.test(normalized)) return true;
    return rules.some((rule) => ('contains' in rule ? normalized.includes(rule.contains) : rule.regex.test(key)));
  };
  // Arguments repeat the same few keys; a lookup is far cheaper than normalizing and testing.
  const cache = new Map<string, boolean>();
  return (key) => {
    let secret = cache.get(key);
    if (secret !== undefined) return secret;
    secret = decide(key);
    if (key.length <= MAX_CACHED_KEY_LENGTH) {
      if (cache.size >= MAX_CACHED_KEYS) cache.clear();
      cache.set(key, secret);
    }
    return secret;
  };
}

const DEFAULT_KEY_REGEX = new RegExp(DEFAULT_SECRET_KEYS.map((rule) => `(?:${rule.pattern.source})`).join('|'));

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
  };
}

const DEFAULT_VALUES = combine(DEFAULT_VALUE_PATTERNS);

function redactDefaults(text: string): string {
  const { regex, markers, kindGroups, secretGroups } = DEFAULT_VALUES;
  regex.lastIndex = 0;
  let match = regex.exec(text);
  if (match === null) return text;
  let out = '';
  let copied = 0;
  do {
    const groups = match.groups!;
    let i = 0;
    while (groups[kindGroups[i]] === undefined) i++;
    const end = match.index + match[0].length;
    // The secret group ends the match (a pattern rule), so its start follows from its length.
    const secret = groups[secretGroups[i]];
    const start = secret === undefined ? match.index : end - secret.length;
    out += text.slice(copied, start) + markers[i];
    copied = end;
    match = regex.exec(text);
  } while (match !== null);
  return out + text.slice(copied);
}

function compileValuePattern(pattern: string): RegExp {
  const slashed = SLASHED.exec(pattern);
  if (slashed === null) return new RegExp(pattern, 'g');
  if (slashed[2].includes('y')) throw new Error("flag 'y' cannot be used");
  return new RegExp(slashed[1], `g${slashed[2].replace('g', '')}`);
}

/** Replaces every non-empty match of a global regex (an empty one would mark nothing). */
function replaceMatches(text: string, regex: RegExp, marker: string): string {
  regex.lastIndex = 0;
  let out: string | undefined;
  let copied = 0;
  for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
    if (match[0] === '') {
      regex.lastIndex++;
      continue;
    }
    out = (out ?? '') + text.slice(copied, match.index) + marker;
    copied = match.index + match[0].length;
  }
  return out === undefined ? text : out + text.slice(copied);
}

function createTextRedactor(options: RedactionOptions): (text: string) => string {
  const useDefaults = options.defaults !== false;
  const custom = (options.patterns ?? []).map(compileValuePattern);
  if (custom.length === 0) {
    if (!useDefaults) return (text) => text;
    return (text) => (text.length < SHORTEST_DEFAULT_MATCH ? text : redactDefaults(text));
  }
  return (text) => {
    let out = useDefaults && text.length >= SHORTEST_DEFAULT_MATCH ? redactDefaults(text) : text;
    for (const regex of custom) out = replaceMatches(out, regex, CUSTOM_MARKER);
    return out;
  };
}

function compileProblem(compile: () => unknown): string | undefined {
  try {
    compile();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
