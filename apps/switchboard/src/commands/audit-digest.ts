import { argumentsDigest } from '@switchboard/audit';
import { readDigestKey } from '../digest-key.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage } from './command-args.js';
import { CommandError, usageError } from './command-error.js';

/** What `audit digest` reads of its arguments; bad usage throws. */
export function readArguments(args: string[]): { values: { config?: string; 'data-dir'?: string; help?: boolean }; parsed: unknown } {
  const { values } = parseCommandArgs(args, { ...COMMON_OPTIONS, arguments: { type: 'string' } });
  if (values.help) return { values, parsed: undefined };
  if (values.arguments === undefined) throw usageError('--arguments JSON is required, e.g. --arguments \'{"path":"/etc/hosts"}\'');
  try {
    return { values, parsed: JSON.parse(values.arguments) as unknown };
  } catch {
    throw usageError('--arguments is not valid JSON');
  }
}

/**
 * `audit digest --arguments JSON`: the digest the daemon would record for these arguments,
 * to check whether a logged call had them. It needs the data dir's key, as the daemon does.
 */
export async function run(args: string[], usage: string): Promise<number> {
  const { values, parsed } = readArguments(args);
  if (values.help) return printUsage(usage);
  const config = loadCommandConfig(values);
  let key: Buffer;
  try {
    key = readDigestKey(config.dataDir);
  } catch (err) {
    // The daemon makes the key on its first start; until then no row has a digest to compare with.
    throw new CommandError(
      `no digest key in ${config.dataDir} (${(err as Error).message}): the daemon creates it on its first start with this data dir, and no row has a digest before that`,
    );
  }
  process.stdout.write(`${argumentsDigest(parsed, key)}\n`);
  return 0;
}
