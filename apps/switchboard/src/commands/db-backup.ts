import { closeSync, existsSync, lstatSync, openSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { journalRowsNotIn, readNewestRow } from '@switchboard/audit';
import type { GatewayConfig } from '@switchboard/config';
import { counted } from '@switchboard/core';
import { backupDatabase, sqliteConnection, type SchemaState, type SqliteConnection } from '@switchboard/persistence';
import type { DataSource } from 'typeorm';
import { databasePath, journalDir } from '../audit-store.js';
import { DIGEST_KEY_FILE, SECRETS_KEY_FILE } from '../digest-key.js';
import { inReadSnapshot } from './audit-reader.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage } from './command-args.js';
import { readingDatabase } from './command-database.js';
import { CommandError, usageError } from './command-error.js';
import { refuseDataDirOutput } from './output-path.js';

const OPTIONS = { ...COMMON_OPTIONS, output: { type: 'string', short: 'o' } } as const;

/** Files SQLite would read as part of a database of that name: a stale one would be applied to the copy. */
const SIDE_FILES = ['-wal', '-journal', '-shm'];

/** What the data dir's key files are for, said beside each in the backup's report. */
const KEY_FILE_USES: Record<string, string> = {
  [SECRETS_KEY_FILE]: 'decrypts the upstream secrets: without it, each must be set again',
  [DIGEST_KEY_FILE]: 'makes the arguments digests: without it, audit digest cannot recompute a logged one',
};

/** What `db backup` reads of its arguments; bad usage throws. */
export function readBackupArguments(args: string[]) {
  const { values } = parseCommandArgs(args, OPTIONS);
  if (values.help) return { values, output: '' };
  if (!values.output) throw usageError('db backup needs --output FILE');
  return { values, output: resolve(values.output) };
}

/**
 * `db backup --output FILE`: a consistent copy of the database, taken while the daemon runs,
 * into a new file (owner-only) outside the data dir; then what it holds, and what of the
 * data dir it does not: the journal's rows not committed yet, and the key files.
 */
export async function runBackup(args: string[], usage: string): Promise<number> {
  const { values, output } = readBackupArguments(args);
  if (values.help) return printUsage(usage);
  const config = loadCommandConfig(values);
  refuseDataDirOutput(output, config.dataDir, '; a backup there is lost with the data dir it is for: write it elsewhere');
  refuseTakenOutput(output);
  const copied = await readingDatabase(config, (dataSource, schema) => copyInto(output, schema, dataSource, config), { anySchema: true });
  process.stdout.write(report(config, output, copied));
  return 0;
}

/** Nothing is overwritten: not a file of that name, nor one SQLite would take for part of it. */
function refuseTakenOutput(output: string): void {
  if (exists(output)) throw new CommandError(`--output ${output} exists; db backup never overwrites a file: name a new one`);
  for (const suffix of SIDE_FILES) {
    if (exists(`${output}${suffix}`)) {
      throw new CommandError(`${output}${suffix} exists beside --output ${output}; SQLite would take it for part of the new file: remove it or name another file`);
    }
  }
  if (!statSync(dirname(output), { throwIfNoEntry: false })?.isDirectory()) throw new CommandError(`--output ${output}: there is no directory ${dirname(output)}`);
}

interface Copied {
  schema: SchemaState;
  /** Undefined when the schema is not this build's: its tables are not read for meaning. */
  contents?: { auditRows: number; head?: { id: number; hash: string }; keys: number; secrets: number; pins: number };
  journalRows: number;
}

/** Creates the file (owner-only, never over another) and copies into it, in one read snapshot with what it reports. */
async function copyInto(output: string, schema: SchemaState, dataSource: DataSource, config: GatewayConfig): Promise<Copied> {
  try {
    closeSync(openSync(output, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') refuseTakenOutput(output);
    throw new CommandError(`cannot write ${output}: ${(err as Error).message}`);
  }
  try {
    return await inReadSnapshot(dataSource, async () => {
      const db = sqliteConnection(dataSource);
      const current = schema.pending.length === 0 && schema.unknown.length === 0;
      // Read first: the snapshot starts at the first read, and the copy is of that snapshot.
      const contents = current ? readContents(db) : undefined;
      const journalRows = current ? journalRowsNotIn(db, journalDir(config)) : 0;
      await backupDatabase(dataSource, output);
      return { schema, contents, journalRows };
    });
  } catch (err) {
    for (const file of [output, ...SIDE_FILES.map((suffix) => `${output}${suffix}`)]) rmSync(file, { force: true });
    throw new CommandError(`backing up ${databasePath(config)} to ${output} failed: ${(err as Error).message}`);
  }
}

function readContents(db: SqliteConnection): NonNullable<Copied['contents']> {
  const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  const newest = readNewestRow(db);
  return {
    auditRows: count('audit_entry'),
    head: newest && { id: newest.id, hash: newest.hash },
    keys: count('api_key'),
    secrets: count('principal_secret'),
    pins: count('tool_pin'),
  };
}

function report(config: GatewayConfig, output: string, { schema, contents, journalRows }: Copied): string {
  const lines = [`backed up ${databasePath(config)} to ${output} (${size(statSync(output).size)}):`];
  if (contents) {
    lines.push(
      contents.head ? `  audit log: ${contents.auditRows} rows, head id ${contents.head.id} (hash ${contents.head.hash})` : '  audit log: no rows',
      `  ${counted(contents.keys, 'API key')}, ${counted(contents.secrets, 'upstream secret')}, ${counted(contents.pins, 'tool pin')}`,
    );
  }
  if (schema.unknown.length > 0) {
    lines.push(`  it is from a newer Switchboard (migrations this version does not know: ${schema.unknown.join(', ')}): restore it only to run that version`);
  } else if (schema.pending.length > 0) {
    lines.push(
      `  it is from an older Switchboard (${schema.pending.length} migration(s) not applied: ${schema.pending.join(', ')}): restored, it is migrated at the next start`,
    );
  }
  const notIn: string[] = [];
  if (existsSync(journalDir(config))) {
    notIn.push(
      `  ${counted(journalRows, 'audit row')} in the journal ${journalDir(config)} not committed yet when it was taken ` +
        "(a running daemon commits them within audit.flushMs, a stopped one's next start moves them in)",
    );
  }
  const keyFiles = readdirSync(config.dataDir).filter((name) => name.endsWith('.key')).sort();
  if (keyFiles.length > 0) {
    const paths = keyFiles.map((name) => join(config.dataDir, name));
    const width = Math.max(...paths.map((p) => p.length));
    notIn.push("  the data dir's key files; keep copies with the backup, as private as it:");
    keyFiles.forEach((name, i) => notIn.push(`    ${paths[i].padEnd(width)}  ${KEY_FILE_USES[name] ?? 'a key file of the data dir'}`));
  }
  if (notIn.length > 0) lines.push('not in it:', ...notIn);
  return `${lines.join('\n')}\n`;
}

function size(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.ceil(bytes / 1024)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

/** Whether anything has that name, a dangling symlink too. */
function exists(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
}
