import type { GatewayConfig } from '@switchboard/config';
import { databasePath, openMigrated } from '../audit-store.js';
import { COMMON_OPTIONS, isMissingCommand, loadCommandConfig, missingCommand, parseCommandArgs, printUsage } from './command-args.js';
import { CommandError, usageError } from './command-error.js';

/** What each `db` subcommand reads of its arguments, without running it; bad usage throws. */
export const DB_ARGUMENTS = { migrate: (args: string[]) => parseCommandArgs(args, COMMON_OPTIONS) };

/** `switchboard db <subcommand>`; returns the exit code. */
export async function runDbCommand(args: string[], usage: string): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand === '--help' || subcommand === '-h') return printUsage(usage);
  if (isMissingCommand(subcommand)) throw usageError(`${missingCommand(subcommand)}\n\n${usage}`);
  if (subcommand !== 'migrate') throw usageError(`unknown db command '${subcommand}'; try: switchboard db migrate`);
  const { values } = DB_ARGUMENTS.migrate(rest);
  if (values.help) return printUsage(usage);
  return migrateDatabase(loadCommandConfig(values));
}

/** Creates the database if need be and applies pending migrations; safe while the daemon runs. */
async function migrateDatabase(config: GatewayConfig): Promise<number> {
  const file = databasePath(config);
  let opened;
  try {
    opened = await openMigrated(config);
  } catch (err) {
    throw new CommandError(`migrating ${file} failed: ${(err as Error).message}`);
  }
  const { dataSource, applied } = opened;
  await dataSource.destroy();
  if (applied.length === 0) process.stdout.write('database is up to date\n');
  else process.stdout.write(`applied ${applied.length} migration(s):\n${applied.map((m) => `  ${m}\n`).join('')}`);
  process.stdout.write(`database: ${file}\n`);
  return 0;
}
