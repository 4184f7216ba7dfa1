import type { ConfigProblem } from './config.types.js';

/** Why a config file was refused; lets a caller tell "no file here" from "a bad file". */
export enum ConfigErrorCode {
  /** Missing, a directory, or not readable. */
  Unreadable = 'CONFIG_UNREADABLE',
  /** Not valid YAML or JSON. */
  Syntax = 'CONFIG_SYNTAX',
  /** Parsed, but breaks the schema or a rule. */
  Invalid = 'CONFIG_INVALID',
}

/**
 * A config file that cannot be used, with every problem found in it. The gateway refuses to
 * start with one, and a hot reload that produces one keeps the previous config in force.
 */
export class ConfigError extends Error {
  constructor(
    readonly code: ConfigErrorCode,
    readonly file: string,
    readonly problems: ConfigProblem[],
    /** Unknown keys found on the way; a misspelt key is often the cause of a problem. */
    readonly warnings: ConfigProblem[] = [],
  ) {
    super(summarize(file, problems, warnings));
    this.name = 'ConfigError';
  }
}

function summarize(file: string, problems: readonly ConfigProblem[], warnings: readonly ConfigProblem[]): string {
  const item = (p: ConfigProblem) => `  - ${p.path ? `${p.path}: ` : ''}${p.reason}`;
  const lines = [`Invalid config file ${file}:`, ...problems.map(item)];
  if (warnings.length > 0) lines.push('Warnings:', ...warnings.map(item));
  return lines.join('\n');
}

const PLAIN_KEY = /^[A-Za-z0-9_$-]+$/;

/**
 * Dotted path for humans. Server names may contain dots or spaces, so such keys are quoted
 * (`mcpServers["my.server"].url`) to keep the path unambiguous.
 */
export function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of segments) {
    const key = String(segment);
    if (typeof segment === 'number' || PLAIN_KEY.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}
