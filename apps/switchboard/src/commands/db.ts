import type { GatewayConfig } from '@switchboard/config';
import { SchemaMismatchError } from '@switchboard/persistence';
import { databasePath, openMigrated } from '../audit-store.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage, runSubcommand } from './command-args.js';
import { CommandError } from './command-error.js';
import { readBackupArguments, runBackup } from './db-backup.js';

/** What each `db` subcommand reads of its arguments, without running it; bad usage throws. */
export const DB_ARGUMENTS = { migrate: (args: string[]) => parseCommandArgs(args, COMMON_OPTIONS), backup: readBackupArguments };

/** `switchboard db <subcommand>`; returns the exit code. */
export function runDbCommand(args: string[], usage: string): Promise<number> {
  return runSubcommand('db', args, usage, { migrate, backup: runBackup });
}

async function migrate(args: string[], usage: string): Promise<number> {
  const { values } = DB_ARGUMENTS.migrate(args);
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
    // A newer Switchboard's database: its message names the file and what to do.
    if (err instanceof SchemaMismatchError) throw new CommandError(err.message);
    throw new CommandError(`migrating ${file} failed: ${(err as Error).message}`);
  }
  const { dataSource, applied } = opened;
  await dataSource.destroy();
  if (applied.length === 0) process.stdout.write('database is up to date\n');
  else process.stdout.write(`applied ${applied.length} migration(s):\n${applied.map((m) => `  ${m}\n`).join('')}`);
  process.stdout.write(`database: ${file}\n`);
  return 0;
}
