import { existsSync } from 'node:fs';
import type { GatewayConfig } from '@switchboard/config';
import { SchemaMismatchCode, SchemaMismatchError, schemaState, type SchemaState } from '@switchboard/persistence';
import type { DataSource } from 'typeorm';
import { databasePath, openMigrated, openReadOnly, openUnmigrated } from '../audit-store.js';
import { CommandError } from './command-error.js';

/** How a command names the file in what it says; `advice` follows a failure to open it. */
export interface ReadingOptions {
  /** `audit database` for the audit commands; `database` otherwise. */
  noun?: string;
  advice?: string;
  /** `db backup` copies the file as it is, whatever its schema: it reads no table for meaning. */
  anySchema?: boolean;
}

/** A database of another Switchboard's schema: refused by every command, whatever it was for. */
export class SchemaRefusal extends CommandError {}

/**
 * Runs `use` on a read-only connection to the data dir's database, and closes it after. A
 * command that only reads never creates, migrates or writes anything: it refuses a data dir
 * with no database (a mistyped --data-dir was given a new, empty database and reported "no
 * keys"), and one an older Switchboard left, whose schema a migration would change under
 * the older daemon still running on it during an upgrade.
 */
export async function readingDatabase<T>(
  config: GatewayConfig,
  use: (dataSource: DataSource, schema: SchemaState) => Promise<T>,
  words: ReadingOptions = {},
): Promise<T> {
  const file = databasePath(config);
  const noun = words.noun ?? 'database';
  if (!existsSync(file)) throw noDatabase(file, noun);
  const cannotOpen = (err: unknown) => new CommandError(`cannot open the ${noun} ${file}: ${(err as Error).message}${words.advice ? `; ${words.advice}` : ''}`);
  let dataSource: DataSource;
  try {
    dataSource = await openReadOnly(config);
  } catch (err) {
    throw cannotOpen(err);
  }
  try {
    let state: SchemaState;
    try {
      // The first read of the file: where one that is no SQLite database shows it.
      state = schemaState(dataSource);
    } catch (err) {
      throw cannotOpen(err);
    }
    if (!words.anySchema) refuseOtherSchema(state, file, noun);
    return await use(dataSource, state);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * Refuses a database whose schema is not this build's: a newer Switchboard's outright, an
 * older one's until `db migrate`. The commands' queries assume today's schema; on an older
 * file they would fail with SQLite's "no such table", or read rows where they no longer are.
 */
export function refuseOtherSchema(state: SchemaState, file: string, noun = 'database'): void {
  if (state.unknown.length > 0) throw new SchemaRefusal(new SchemaMismatchError(SchemaMismatchCode.Newer, file, state.unknown, noun).message);
  if (state.pending.length > 0) {
    const older = new SchemaMismatchError(SchemaMismatchCode.Older, file, state.pending, noun).message;
    throw new SchemaRefusal(`${older}; run \`switchboard db migrate\` (or start the daemon) first`);
  }
}

/**
 * How a command that writes may find the database: `create` (keys create, secrets set) makes
 * and migrates it when it does not exist yet (no file, or one no migration was applied to),
 * so keys and secrets can be set before the first start; `change` (rotate, revoke, delete,
 * accept) changes rows that must be there already, and needs one.
 */
export type WriteMode = 'create' | 'change';

/**
 * Runs `use` on a read-write connection to the data dir's database, and closes it after. An
 * existing database is never migrated here: one an older Switchboard left is refused as the
 * readers refuse it (only `db migrate` and a start migrate), and so is a newer one's.
 */
export async function writingDatabase<T>(config: GatewayConfig, mode: WriteMode, use: (dataSource: DataSource) => Promise<T>): Promise<T> {
  const file = databasePath(config);
  const exists = existsSync(file);
  if (!exists && mode === 'change') throw noDatabase(file, 'database');
  let dataSource: DataSource | undefined;
  let creating = false;
  try {
    if (exists) {
      dataSource = await openUnmigrated(config);
      const state = schemaState(dataSource);
      if (state.fresh && mode === 'create') {
        await dataSource.destroy();
        dataSource = undefined;
      } else refuseOtherSchema(state, file);
    }
    if (!dataSource) {
      creating = true;
      dataSource = (await openMigrated(config)).dataSource;
      // A mistyped --data-dir shows here, not when the daemon cannot find the key.
      process.stderr.write(`note: created the database ${file}: there was none in this data dir\n`);
    }
  } catch (err) {
    if (dataSource?.isInitialized) await dataSource.destroy();
    if (err instanceof CommandError) throw err;
    if (err instanceof SchemaMismatchError) throw new SchemaRefusal(err.message);
    // openMigrated's own words name the file.
    throw new CommandError(creating ? (err as Error).message : `cannot open the database ${file}: ${(err as Error).message}`);
  }
  try {
    return await use(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

export const noDatabase = (file: string, noun = 'database'): CommandError =>
  new CommandError(`no ${noun} at ${file}; start the daemon once or run \`switchboard db migrate\``);
