import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { servingLoopProblem } from './config.chain.js';
import { ConfigError, ConfigErrorCode, formatPath } from './config.errors.js';
import { expandVariables } from './config.expand.js';
import { normalizeConfig } from './config.normalize.js';
import { parseConfigText, readConfigBytes } from './config.parse.js';
import { serverCommandWarnings } from './config.commands.js';
import { checkRules, ruleWarnings } from './config.rules.js';
import { configInputSchema, type ConfigInput } from './config.schema.js';
import { knownKeysAt, unknownKeyReason } from './config.suggest.js';
import type { ConfigProblem, GatewayConfig } from './config.types.js';

export interface LoadedConfig {
  config: GatewayConfig;
  /** The file's bytes as loaded: what a watcher started later compares with. */
  bytes: Buffer;
  /** Unknown keys, which other MCP hosts put in these files; worth logging, not refusing. */
  warnings: ConfigProblem[];
}

type Env = Readonly<Record<string, string | undefined>>;

/** Loads and validates a config file; throws a ConfigError listing every problem. */
export function loadConfig(file: string, env: Env = process.env): GatewayConfig {
  return loadConfigWithWarnings(file, env).config;
}

export function loadConfigWithWarnings(file: string, env: Env = process.env): LoadedConfig {
  const absolute = resolve(file);
  return loadConfigBytes(absolute, readConfigBytes(absolute), env);
}

/** The shipped config (config/default.yaml); the same relative hop from src/ under vitest and from dist/. */
export function defaultConfigPath(): string {
  return fileURLToPath(new URL('../../../config/default.yaml', import.meta.url));
}

/** For callers that already hold the bytes (the watcher compares them with the last load). */
export function loadConfigBytes(file: string, bytes: Buffer, env: Env): LoadedConfig {
  const problems: ConfigProblem[] = [];
  const warnings: ConfigProblem[] = [];
  const at = (path: string, reason: string): ConfigProblem => ({ file, path, reason });

  const expanded = expandVariables(parseConfigText(file, bytes), env);
  problems.push(...expanded.issues.map((i) => at(i.path, i.reason)));
  // A value with a missing variable would also fail its format check; one problem is enough.
  const alreadyReported = new Set(expanded.issues.map((i) => i.path));

  const parsed = configInputSchema.safeParse(expanded.value, HAND_WRITTEN);
  const unknownKeys: UnknownKeys[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        unknownKeys.push({ at: issue.path, keys: issue.keys });
        // Warnings, not problems, even when a known key is close: Claude Desktop, Cline and
        // others put keys of their own in these files (Cline's `timeout` is one edit from
        // `timeouts`), and refusing them would refuse the files people import. The hint
        // makes a misspelt key's warning say what it was meant to be instead.
        const known = knownKeysAt(configInputSchema, issue.path);
        warnings.push(...issue.keys.map((key) => at(formatPath([...issue.path, key]), unknownKeyReason(key, known))));
        continue;
      }
      const path = formatPath(issue.path);
      if (!alreadyReported.has(path)) problems.push(at(path, issueReason(issue)));
    }
  }
  problems.push(...checkRules(expanded.value).map((p) => at(p.path, p.reason)));
  warnings.push(...ruleWarnings(expanded.value).map((w) => at(w.path, w.reason)));
  warnings.push(...serverCommandWarnings(expanded.value, file).map((w) => at(w.path, w.reason)));
  const loop = servingLoopProblem(file, env);
  if (loop) problems.push(at('', loop));
  if (problems.length > 0) {
    // A key the rules refuse (envFile) is also unknown to the schema; say it once, as the problem.
    const refused = new Set(problems.map((p) => p.path));
    throw new ConfigError(ConfigErrorCode.Invalid, file, problems, warnings.filter((w) => !refused.has(w.path)));
  }

  const input: ConfigInput = parsed.success
    ? parsed.data
    : configInputSchema.parse(withoutKeys(expanded.value, unknownKeys));
  return { config: normalizeConfig(file, input), warnings, bytes };
}

interface UnknownKeys {
  at: PropertyKey[];
  keys: string[];
}

/** The strict schema refuses unknown keys; dropping them gives the input it accepts. */
function withoutKeys(value: unknown, unknown: readonly UnknownKeys[]): unknown {
  const copy = structuredClone(value);
  for (const { at, keys } of unknown) {
    let node: unknown = copy;
    for (const segment of at) node = (node as Record<PropertyKey, unknown>)[segment];
    for (const key of keys) delete (node as Record<string, unknown>)[key];
  }
  return copy;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'a mapping (an object)',
  record: 'a mapping (an object)',
  array: 'a list',
};

/**
 * Plain-English reasons for the generic issues; schema-specific messages take precedence.
 * Also for the other files people write by hand (the policy file).
 */
export const describeIssue: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'invalid_value':
      return `must be one of: ${issue.values.map(String).join(', ')}`;
    case 'invalid_key':
      // Zod's own message is "Invalid key in record"; the key's schema says what a key must be.
      return issue.issues.map((keyIssue) => keyIssue.message).join('; ') || undefined;
    default:
      return undefined;
  }
};

/** The codes zod gives a key that is absent (a string, a number, an enum, a union of them). */
const ABSENT_CODES = new Set(['invalid_type', 'invalid_value', 'invalid_union']);

/**
 * The reason a refusal gives for an issue: a key the file leaves out "is required", whatever
 * the field's own message says (its type or range, which is about a value that is there, and
 * which its schema's own error takes from the error map). Needs the input in the issues
 * (HAND_WRITTEN); a null is a value written, and keeps the type's message.
 */
export function issueReason(issue: z.core.$ZodIssue): string {
  const absent = issue.path.length > 0 && ABSENT_CODES.has(issue.code) && 'input' in issue && issue.input === undefined;
  return absent ? 'is required' : issue.message;
}

/** How the files people write (the config, the policy) are parsed: plain reasons, and the input issueReason needs. */
export const HAND_WRITTEN = { error: describeIssue, reportInput: true } as const;
