import type { ParseArgsConfig } from 'node:util';
import { ConfigError, closestKey, defaultConfigPath, loadConfigWithWarnings, type GatewayConfig } from '@switchboard/config';
import { dataDirOverride } from '../option-values.js';
import { parseOptions } from '../parse-options.js';
import { CommandError, usageError } from './command-error.js';
import { usagePart } from './usage-part.js';

/** Options every db/audit command takes. */
export const COMMON_OPTIONS = {
  config: { type: 'string', short: 'c' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** parseArgs with the command's options; unknown or repeated options and stray words are usage errors. */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: O,
): ReturnType<typeof parseOptions<{ args: string[]; options: O; allowPositionals: false }>> {
  try {
    return parseOptions({ args, options, allowPositionals: false });
  } catch (err) {
    throw usageError((err as Error).message);
  }
}

/**
 * Whether the word in a family's command place names no command: there is none, or it is an
 * option (`switchboard -c FILE audit`, `switchboard keys --config FILE list`).
 */
const isMissingCommand = (word: string | undefined): word is undefined | `-${string}` => word === undefined || word.startsWith('-');

/**
 * Says the command is missing, and why when an option stood in its place: told "unknown audit
 * command '-c'", a user would look for a command named -c rather than add the missing one.
 */
const missingCommand = (word: string | undefined): string =>
  word === undefined ? 'a command is missing' : `a command is missing ('${word}' is an option, not a command)`;

/**
 * `switchboard <family> <subcommand> ...`: runs the subcommand named first, or answers
 * --help; a missing or unknown one is a usage error naming the ones there are. `usage` is
 * the whole usage text: --help here prints the family's part of it, and the subcommand is
 * given its own part, for its --help.
 */
export function runSubcommand(
  family: string,
  args: string[],
  usage: string,
  subcommands: Record<string, (args: string[], usage: string) => Promise<number>>,
): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand === '--help' || subcommand === '-h') return Promise.resolve(printUsage(usagePart(usage, family)));
  const run = subcommand !== undefined && Object.hasOwn(subcommands, subcommand) ? subcommands[subcommand] : undefined;
  if (!run) {
    const meant = isMissingCommand(subcommand) ? undefined : closestKey(subcommand, Object.keys(subcommands));
    const problem = isMissingCommand(subcommand)
      ? missingCommand(subcommand)
      : `unknown ${family} command '${subcommand}'${meant ? ` (did you mean ${meant}?)` : ''}`;
    throw usageError(`${problem}; try: ${Object.keys(subcommands).join(', ')}`);
  }
  return run(rest, usagePart(usage, `${family} ${subcommand}`));
}

/**
 * The command's options (the common ones unless given) and one word after the subcommand
 * (`keys revoke NAME`, `tools accept S/T`, `keys rotate NAME --overlap 1h`).
 */
export function parseOneArgument<O extends NonNullable<ParseArgsConfig['options']> & typeof COMMON_OPTIONS = typeof COMMON_OPTIONS>(
  args: string[],
  what: string,
  options: O = COMMON_OPTIONS as O,
): { values: ReturnType<typeof parseOptions<{ args: string[]; options: O; allowPositionals: true }>>['values']; argument: string } {
  let parsed;
  try {
    parsed = parseOptions({ args, options, allowPositionals: true });
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  // Every command has --help (COMMON_OPTIONS); TypeScript cannot see it through the generic O.
  const help = (values as { help?: boolean }).help;
  if (positionals.length !== 1 && !help) throw usageError(`give one ${what}`);
  return { values, argument: positionals[0] ?? '' };
}

/** The config the daemon would use, with `--data-dir` applied; a bad config is exit 2. */
export function loadCommandConfig(values: { config?: string; 'data-dir'?: string }): GatewayConfig {
  const dataDir = dataDirOverride(values['data-dir'], usageError);
  try {
    const loaded = loadConfigWithWarnings(values.config ?? defaultConfigPath());
    for (const w of loaded.warnings) process.stderr.write(`warning: ${w.file}: ${w.path}: ${w.reason}\n`);
    return { ...loaded.config, dataDir: dataDir ?? loaded.config.dataDir };
  } catch (err) {
    if (err instanceof ConfigError) throw new CommandError(err.message, 2);
    throw err;
  }
}

export function printUsage(usage: string): number {
  process.stdout.write(`${usage}\n`);
  return 0;
}

/** A comma-separated option (`--roles dev,ops`) as its items, blanks dropped. */
export const commaList = (text: string | undefined): string[] => (text ?? '').split(',').map((s) => s.trim()).filter(Boolean);
