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
 * file it no longer understands. `migrations` names the ones in question, oldest first;
 * `what` is what the message calls the file (a command reading the audit log says "audit database").
 */
export class SchemaMismatchError extends Error {
  constructor(
    readonly code: SchemaMismatchCode,
    readonly file: string,
    readonly migrations: string[],
    what = 'database',
  ) {
    super(code === SchemaMismatchCode.Newer ? newerMessage(`${what} ${file}`, migrations) : olderMessage(`${what} ${file}`, migrations));
    this.name = 'SchemaMismatchError';
  }
}

function newerMessage(database: string, unknown: readonly string[]): string {
  return (
    `the ${database} was migrated by a newer Switchboard (${unknown.length === 1 ? 'migration' : 'migrations'} this version ` +
    `does not know: ${unknown.join(', ')}); run that version, or restore a backup taken before the upgrade`
  );
}

function olderMessage(database: string, pending: readonly string[]): string {
  return `the ${database} is from an older Switchboard (${pending.length} migration(s) not applied: ${pending.join(', ')})`;
}
