import { COMMANDS_WITH_SECRET_ARGUMENTS, DEFAULT_SECRET_KEYS } from './secret-patterns.js';
import { hideInItem, secretsInArgv } from './command-argv.js';
import { compileValuePattern, createCommandLineFinder, createTextRedactor, SLASHED } from './text-redactor.js';

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
  /**
   * More commands, by name ('acme-run'; matched in an item by name or path), whose argv
   * arrays are read as the one command line they stand for, as the defaults' are (mysql,
   * sshpass…), and searched with `patterns` too: a pattern that follows a command to a later
   * word (`acme-run --key X`) sees each item of other arrays alone.
   */
  commands?: string[];
}

/** A command's name as `commands` takes it: no blank (an item is one word) and no path. */
const COMMAND_NAME = /^[^\s/\\]+$/;

export interface Redactor {
  /**
   * `value` with secrets replaced. Values under a secret key become '[REDACTED]' (whatever
   * their type; an undefined member stays undefined), and so does the value of a name/value
   * pair whose name is a secret key: `{name: 'DB_PASSWORD', value: X}` (or `key:` instead of
   * `name:`, any case) and `['Authorization', X]` (an array of exactly two items, the first a
   * name); substrings matching a value pattern become `[REDACTED:<kind>]`, in object keys too
   * (a map keyed by tokens; a key so changed that meets another gets '#2', '#3'…); in an array, a
   * string after a secret flag ('--password', 'x') becomes '[REDACTED]' too, and an array that
   * names a command whose flags the value patterns know (mysql,
   * sshpass, aws…) is also searched as the one command line it stands for, what is found there
   * replaced in its item (['mysql', '-pX'] → ['mysql', '-p[REDACTED:cli-password]']). A repeated
   * ancestor (a cycle) becomes '[Circular]', nesting
   * deeper than 1000 levels '[Truncated]'. Never mutates the input, never throws on non-JSON
   * values (undefined, functions, bigint, symbols are returned as they are).
   *
   * Copy-on-write: when nothing is redacted the input itself is returned, and a changed
   * structure shares its unchanged branches with the input. The result must therefore be
   * treated as read-only, like the input (the audit log serializes it at once).
   */
  redact(value: unknown): unknown;
  /**
   * Applies only the value patterns to a free text (an error message, a log line, a resource
   * URI). A text with percent-escapes (`%20`) is also searched as decoded once, and what is
   * found there is replaced in the text as it is (`Bearer%20[REDACTED:bearer-token]`).
   */
  redactText(text: string): string;
  /**
   * redactText for a short text that repeats (a tool or prompt name, a client's name, an
   * object key): remembers its answer for a bounded number of texts.
   */
  redactName(text: string): string;
}

const REDACTED = '[REDACTED]';
const CIRCULAR = '[Circular]';
const TRUNCATED = '[Truncated]';
// Far deeper than real arguments, well within the call stack (two frames per level).
const MAX_DEPTH = 1000;
// Keys and names come from the host: what a redactor remembers of them must stay bounded.
const MAX_REMEMBERED_TEXTS = 4096;
const MAX_REMEMBERED_LENGTH = 128;
/** A name/value pair's name longer than this is prose, not a name: it is not judged. */
const MAX_PAIR_NAME_LENGTH = 128;

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
  for (const command of options.commands ?? []) {
    if (typeof command !== 'string' || !COMMAND_NAME.test(command)) {
      problems.push(`redaction command ${JSON.stringify(command)}: must be a command's name, without blanks or a path (acme-run, not /usr/bin/acme-run)`);
    }
  }
  return problems;
}

/** Compiles the options once; throws an Error listing every problem checkRedactionOptions finds. */
export function createRedactor(options: RedactionOptions = {}): Redactor {
  const problems = checkRedactionOptions(options);
  if (problems.length > 0) throw new Error(`invalid redaction options: ${problems.join('; ')}`);
  const decideSecretKey = createKeyDecider(options);
  const redactText = createTextRedactor(options);
  // Keys and names repeat on every call: both facts about one are remembered together, so an
  // argument's key costs one lookup.
  const factsOf = remembered((text): TextFacts => ({ secretKey: decideSecretKey(text), redacted: redactText(text) }));
  const isSecretKey = (key: string) => factsOf(key).secretKey;
  const redactName = (text: string) => factsOf(text).redacted;
  // The commands whose argv arrays are read as a line, and what to search that line with.
  const commands = new Set([...(options.defaults === false ? [] : COMMANDS_WITH_SECRET_ARGUMENTS), ...(options.commands ?? [])]);
  const findInCommand = commands.size === 0 ? undefined : createCommandLineFinder(options);

  /** `seen`: every object met so far in this walk and what it became; undefined until an object is met. */
  function redactValue(value: unknown, seen: Map<object, unknown> | undefined, depth: number): unknown {
    if (typeof value === 'string') return redactText(value);
    if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
    seen ??= new Map();
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

  /** A name of a name/value pair ('Authorization', 'DB_PASSWORD') that is a secret key. */
  function isSecretName(name: unknown): boolean {
    return typeof name === 'string' && name.length <= MAX_PAIR_NAME_LENGTH && isSecretKey(name);
  }

  /**
   * Also an argv array: the value after a secret flag (['--password', 'x']) is redacted too, and
   * a command's secrets that only its whole line shows (['mysql', '-pX']); and a [name, value]
   * pair (a header list's ['Authorization', 'Basic …']): its value.
   */
  function redactArray(array: unknown[], seen: Map<object, unknown> | undefined, depth: number): unknown[] {
    let copy: unknown[] | undefined;
    let afterSecretFlag = false;
    const secretPair = array.length === 2 && isSecretName(array[0]);
    const inCommand = findInCommand === undefined ? undefined : secretsInArgv(array, commands, findInCommand);
    for (let i = 0; i < array.length; i++) {
      const item = array[i];
      const inLine = inCommand?.get(i);
      const redacted =
        secretPair && i === 1
          ? item === undefined ? undefined : REDACTED
          : afterSecretFlag && typeof item === 'string' && !item.startsWith('-')
            ? REDACTED
            : inLine !== undefined
              ? hideInItem(item as string | number, inLine, redactText)
              : redactValue(item, seen, depth);
      afterSecretFlag = typeof item === 'string' && FLAG.test(item) && isSecretKey(item);
      if (copy === undefined) {
        if (Object.is(redacted, item)) continue;
        copy = array.slice(0, i);
      }
      copy.push(redacted);
    }
    return copy ?? array;
  }

  /**
   * The key of the value member of a name/value pair whose name is a secret key (a HAR header
   * `{name: 'Authorization', value}`, a Kubernetes env var `{name: 'DB_PASSWORD', value}`, a
   * tag `{Key: 'api_key', Value}`, a completion's `{name: 'password', value}`), or undefined.
   */
  function secretPairValueKey(record: Record<string, unknown>, keys: string[]): string | undefined {
    let valueKey: string | undefined;
    let nameKeys: string[] | undefined;
    for (const key of keys) {
      // 'key', 'name' and 'value' are 3 to 5 characters long: one length check for the others.
      if (key.length < 3 || key.length > 5) continue;
      const lower = key.toLowerCase();
      if (lower === 'value') valueKey = key;
      else if (lower === 'name' || lower === 'key') (nameKeys ??= []).push(key);
    }
    if (valueKey === undefined || nameKeys === undefined) return undefined;
    return nameKeys.some((key) => isSecretName(record[key])) ? valueKey : undefined;
  }

  function redactRecord(record: Record<string, unknown>, seen: Map<object, unknown> | undefined, depth: number): unknown {
    let copy: Record<string, unknown> | undefined;
    const keys = Object.keys(record);
    const pairValueKey = secretPairValueKey(record, keys);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const item = record[key];
      let redacted: unknown;
      const facts = factsOf(key);
      if (key === pairValueKey || facts.secretKey) redacted = item === undefined ? undefined : REDACTED;
      else redacted = redactValue(item, seen, depth);
      const storedKey = facts.redacted;
      if (copy === undefined) {
        if (storedKey === key && Object.is(redacted, item)) continue;
        copy = {};
        for (let j = 0; j < i; j++) setOwn(copy, keys[j], record[keys[j]]);
      }
      setOwn(copy, storedKey === key ? key : unusedKey(storedKey, record, copy), redacted);
    }
    return copy ?? record;
  }

  return {
    redact: (value) => {
      // Most arguments are one object of strings and numbers: nothing in it can repeat, so
      // the walk needs no Map to remember what it met (one less allocation a recorded call).
      if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value) && holdsNoObjects(value)) {
        return Array.isArray(value) ? redactArray(value, undefined, 1) : redactRecord(value as Record<string, unknown>, undefined, 1);
      }
      return redactValue(value, undefined, 0);
    },
    redactText,
    redactName,
  };
}

/**
 * `wanted`, or `wanted#2`, `wanted#3`… the first that neither the original object nor its copy
 * has: two keys redacted to the same marker both stay, and neither overwrites a real key.
 */
function unusedKey(wanted: string, record: Record<string, unknown>, copy: Record<string, unknown>): string {
  let key = wanted;
  for (let n = 2; Object.hasOwn(record, key) || Object.hasOwn(copy, key); n++) key = `${wanted}#${n}`;
  return key;
}

/**
 * `decide` with a bounded memory of its answers for short texts: names and keys repeat on
 * every call, and a lookup costs far less than a scan. Texts come from hosts, so the memory
 * is emptied when full rather than allowed to grow.
 */
function remembered<T>(decide: (text: string) => T): (text: string) => T {
  const answers = new Map<string, T>();
  return (text) => {
    if (text.length > MAX_REMEMBERED_LENGTH) return decide(text);
    let answer = answers.get(text);
    if (answer !== undefined) return answer;
    answer = decide(text);
    if (answers.size >= MAX_REMEMBERED_TEXTS) answers.clear();
    answers.set(text, answer);
    return answer;
  };
}

const IN_PROGRESS = Symbol('in progress');

/** Whether none of a container's own values is an object (or array). */
function holdsNoObjects(value: object): boolean {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (typeof value[i] === 'object' && value[i] !== null) return false;
    return true;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null) return false;
  }
  return true;
}

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

/** What a redactor knows of a key or name: whether it names a secret, and the text as stored. */
interface TextFacts {
  secretKey: boolean;
  redacted: string;
}

function createKeyDecider(options: RedactionOptions): (key: string) => boolean {
  const defaults = options.defaults === false ? undefined : DEFAULT_KEY_REGEX;
  const rules = (options.keys ?? []).map(compileKeyRule);
  if (defaults === undefined && rules.length === 0) return () => false;
  return (key: string): boolean => {
    const normalized = normalizeKey(key);
    if (defaults?.test(normalized)) return true;
    return rules.some((rule) => ('contains' in rule ? normalized.includes(rule.contains) : rule.regex.test(key)));
  };
}

const DEFAULT_KEY_REGEX = new RegExp(DEFAULT_SECRET_KEYS.map((rule) => `(?:${rule.pattern.source})`).join('|'));

function compileProblem(compile: () => unknown): string | undefined {
  try {
    compile();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
