/** Why a database's schema is not the one this build works with. */
export enum SchemaMismatchCode {
  /** Migrations this build knows are not applied: an older Switchboard left the file. */
  Older = 'DATABASE_OLDER',
  /** Migrations this build does not know are applied: a newer Switchboard migrated the file. */
  Newer = 'DATABASE_NEWER',
}

/**
 * A database this build must not use as it is. A newer one is refused outright: its tables
 * may mean what this build cannot know, and writing to them would hand the newer version a
 * file it no longer understands. `migrations` names the ones in question, oldest first.
 */
export class SchemaMismatchError extends Error {
  constructor(
    readonly code: SchemaMismatchCode,
    readonly file: string,
    readonly migrations: string[],
  ) {
    super(code === SchemaMismatchCode.Newer ? newerMessage(file, migrations) : olderMessage(file, migrations));
    this.name = 'SchemaMismatchError';
  }
}

function newerMessage(file: string, unknown: readonly string[]): string {
  return (
    `the database ${file} was migrated by a newer Switchboard (${unknown.length === 1 ? 'migration' : 'migrations'} this version ` +
    `does not know: ${unknown.join(', ')}); run that version, or restore a backup taken before the upgrade`
  );
}

function olderMessage(file: string, pending: readonly string[]): string {
  return `the database ${file} is from an older Switchboard (${pending.length} migration(s) not applied: ${pending.join(', ')})`;
}
