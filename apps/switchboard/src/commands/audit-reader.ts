import type { GatewayConfig } from '@switchboard/config';
import { countedBe } from '@switchboard/core';
import { sqliteConnection } from '@switchboard/persistence';
import type { DataSource } from 'typeorm';
import { AuditQuery, readerSchemaProblem, strandedJournals, unknownOwnerAdvice, type AuditFilter } from '@switchboard/audit';
import { databasePath, journalDir } from '../audit-store.js';
import { readingDatabase } from './command-database.js';
import { CommandError } from './command-error.js';

/**
 * Runs `read` on a read-only connection to the daemon's database and closes it after. WAL
 * lets it read while a running daemon writes; it never creates or migrates the file
 * (readingDatabase), and says what the log does not show yet.
 */
export async function withAuditReader<T>(
  config: GatewayConfig,
  read: (dataSource: DataSource) => Promise<T>,
  /** `verify` reports a tampered schema as its verdict, not as a warning beside it. */
  options: { schemaWarning?: boolean } = {},
): Promise<T> {
  return readingDatabase(
    config,
    async (dataSource) => {
      const stranded = strandedJournals(sqliteConnection(dataSource), journalDir(config));
      if (stranded.rows > 0) {
        // Every recorded request's row, answered, denied or refused: not only answered calls.
        process.stderr.write(
          `warning: ${countedBe(stranded.rows, 'audit row', 'present')} in the journal of a process that stopped without ` +
            `committing them (${journalDir(config)}); they are not shown here until \`switchboard start\` moves them into the log\n`,
        );
      }
      for (const { journal, lock, pid } of stranded.unknownOwner) {
        process.stderr.write(`warning: ${unknownOwnerAdvice(journal, lock, pid).replace(/^audit: /, '')}\n`);
      }
      // What follows is read through that view: an export of a rewritten one would pass its lies on.
      const tampered = options.schemaWarning === false ? undefined : readerSchemaProblem(sqliteConnection(dataSource));
      if (tampered) process.stderr.write(`warning: ${tampered}; run \`switchboard audit verify\`\n`);
      try {
        return await read(dataSource);
      } catch (err) {
        if (err instanceof CommandError) throw err;
        // SQLite's own words (SQLITE_BUSY, say) are what helps here.
        throw new CommandError(`reading the audit database ${databasePath(config)} failed: ${(err as Error).message}`);
      }
    },
    { noun: 'audit database' },
  );
}

/**
 * Runs `read` inside one read transaction: every query sees the file as it was at the first
 * one. `verify` needs that: retention pruning old rows while the walk is under way would
 * otherwise look like deleted rows.
 */
export async function inReadSnapshot<T>(dataSource: DataSource, read: () => Promise<T>): Promise<T> {
  const db = sqliteConnection(dataSource);
  db.exec('BEGIN');
  try {
    return await read();
  } finally {
    db.exec('COMMIT');
  }
}

/**
 * After a read that found no rows: a note on stderr for each filter no row of the log
 * matches (`--method tools/calls`), with the value most likely meant. Without it, a typo
 * reads as "nothing of the kind happened". The output itself stays empty, as scripts expect.
 */
export async function noteUnmatchedFilters(dataSource: DataSource, filter: AuditFilter): Promise<void> {
  for (const note of await new AuditQuery(dataSource).unmatchedFilters(filter)) process.stderr.write(`note: ${note}\n`);
}
