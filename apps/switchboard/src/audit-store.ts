import { join } from 'node:path';
import {
  AUDIT_ENTITIES,
  AuditLog,
  AuditWriter,
  CheckpointJob,
  FilesInPlace,
  HeadKeeper,
  RetentionJob,
  committerFor,
  committingInPlace,
  createRedactor,
  journalFor,
  readNewestRow,
  recoverJournals,
} from '@switchboard/audit';
import { AUTH_ENTITIES } from '@switchboard/auth';
import { AUDIT_CHECKPOINT_EVERY, AUDIT_RETENTION, type GatewayConfig } from '@switchboard/config';
import { durationMs } from '@switchboard/core';
import { MIGRATIONS } from '@switchboard/migrations';
import type { Logger } from '@switchboard/observability';
import { DATABASE_FILE, SchemaMismatchError, migrate, openDatabase, sqliteConnection } from '@switchboard/persistence';
import { loadDigestKey } from './digest-key.js';
import type { DataSource } from 'typeorm';

/** Every table's entity: the audit log's and the API keys'. */
const DATABASE_ENTITIES = [...AUDIT_ENTITIES, ...AUTH_ENTITIES];

/** The daemon's writer connection gives up on another process's lock quickly: it blocks the event loop meanwhile. */
const WRITER_BUSY_TIMEOUT_MS = 100;

export const databasePath = (config: GatewayConfig): string => join(config.dataDir, DATABASE_FILE);

/** Where strict mode's journals live (one per running daemon; see JournalFile). */
export const journalDir = (config: GatewayConfig): string => join(config.dataDir, 'audit-journal');

/** How long a start waits for another process that is migrating the same file. */
const MIGRATION_BUSY_TIMEOUT_MS = 15_000;
/** Tries at migrating while other processes migrate the same file (each waits for the others' locks). */
const MIGRATION_ATTEMPTS = 10;

/**
 * Opens the database in the data dir and applies pending migrations; logs what ran.
 * Several processes may start on one data dir at once (a daemon and `switchboard stdio`
 * instances launched by hosts): each waits for the other's migration transaction, and one
 * that loses the race finds the migrations applied, which is success. A database a newer
 * Switchboard migrated is refused (SchemaMismatchError, its message naming the file) at once:
 * trying again cannot change that.
 */
export async function openMigrated(
  config: GatewayConfig,
  logger?: Logger,
  busyTimeoutMs?: number,
): Promise<{ dataSource: DataSource; applied: string[] }> {
  let dataSource: DataSource | undefined;
  let applied: string[] = [];
  for (let attempt = 1; ; attempt++) {
    try {
      dataSource ??= await openDatabase({
        file: databasePath(config),
        entities: DATABASE_ENTITIES,
        migrations: MIGRATIONS,
        synchronous: config.audit.synchronous,
        busyTimeoutMs: MIGRATION_BUSY_TIMEOUT_MS,
      });
      applied = applied.concat(await migrate(dataSource));
      break;
    } catch (err) {
      if (err instanceof SchemaMismatchError) {
        await dataSource?.destroy();
        throw err;
      }
      // Another process may be creating the file: switching it to WAL answers "database is
      // locked" without waiting. Migrations themselves wait for each other (migrate takes the
      // write lock before reading what is applied), so trying again carries on from there.
      if (attempt >= MIGRATION_ATTEMPTS) {
        if (dataSource?.isInitialized) await dataSource.destroy();
        // SQLite's own words ("attempt to write a readonly database") name no file.
        throw new Error(`cannot open and migrate the database ${databasePath(config)}: ${(err as Error).message}`, { cause: err });
      }
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
  if (applied.length > 0) logger?.info({ migrations: applied, file: databasePath(config) }, 'database migrated');
  if (busyTimeoutMs !== undefined) sqliteConnection(dataSource).pragma(`busy_timeout = ${busyTimeoutMs}`);
  return { dataSource, applied };
}

/** For the CLI's commands that change rows: read-write, migrating nothing (see writingDatabase). */
export function openUnmigrated(config: GatewayConfig): Promise<DataSource> {
  return openDatabase({ file: databasePath(config), entities: DATABASE_ENTITIES, migrations: MIGRATIONS, synchronous: config.audit.synchronous });
}

/** For the CLI's readers: never creates or migrates anything. */
export function openReadOnly(config: GatewayConfig): Promise<DataSource> {
  return openDatabase({ file: databasePath(config), entities: DATABASE_ENTITIES, migrations: MIGRATIONS, readonly: true });
}

export interface AuditStore {
  /** Undefined with `audit.enabled: false`. */
  log?: AuditLog;
  /** The daemon's database: the audit log and API keys. */
  dataSource: DataSource;
  close(): Promise<void>;
}

/**
 * The daemon's audit log: database opened and migrated, group-commit writer, redaction,
 * and background retention. With `audit.enabled: false` nothing is opened.
 */
export async function openAuditStore(config: GatewayConfig, logger: Logger): Promise<AuditStore> {
  const settings = config.audit;
  // Opened even with the log off: API keys live in the same database.
  const { dataSource } = await openMigrated(config, logger, WRITER_BUSY_TIMEOUT_MS);
  const db = sqliteConnection(dataSource);
  // Whatever this run's settings: rows a strict run left in its journal belong in the log.
  recoverJournals(db, journalDir(config), logger);
  if (!settings.enabled) {
    logger.warn('audit log disabled by configuration (audit.enabled: false): tool calls are not recorded');
    return { dataSource, close: () => dataSource.destroy() };
  }
  // Strict on `normal`: answers wait for a write to the journal instead of a commit (ADR 007).
  const journal = journalFor(settings, journalDir(config));
  // A data directory deleted under the daemon must stop the log loudly, not take its rows along.
  const inPlace = new FilesInPlace([databasePath(config), ...(journal ? [journal.path] : [])]);
  const inner = committingInPlace(
    committerFor(db, { file: databasePath(config), synchronous: settings.synchronous, busyTimeoutMs: WRITER_BUSY_TIMEOUT_MS }),
    inPlace,
  );
  // The head each commit leaves, for the checkpoints (when on): known without a query.
  const checkpointMs = durationMs(settings.checkpointEvery, AUDIT_CHECKPOINT_EVERY);
  const heads = checkpointMs === undefined ? undefined : new HeadKeeper();
  // The log's head as this start finds it, read once: rows moved in from a killed run's
  // journal, and rows that run committed after its last checkpoint, which no commit of this
  // process reports (an idle daemon would make none). It vouches for nothing the next
  // commit's checkpoint would not, as that head anchors the same rows through the chain; it
  // only closes the window while the daemon is idle. A head the last run already logged is
  // logged once more, at most.
  heads?.note(readNewestRow(db));
  const committer = heads ? heads.keeping(inner) : inner;
  const writer = new AuditWriter(committer, {
    mode: settings.mode,
    flushMs: settings.flushMs,
    maxQueuedRows: settings.maxQueuedRows,
    logger,
    journal,
  });
  const log = new AuditLog(writer, {
    redactor: createRedactor(settings.redact),
    maxArgumentBytes: settings.maxArgumentBytes,
    completions: settings.completions,
    digestKey: loadDigestKey(config.dataDir),
  });
  const retentionMs = durationMs(settings.retention, AUDIT_RETENTION);
  const retention = retentionMs === undefined ? undefined : new RetentionJob(db, retentionMs, logger, heads);
  retention?.start();
  const checkpoints = heads && new CheckpointJob(heads, checkpointMs!, logger);
  checkpoints?.start();
  logger.info({ file: databasePath(config), mode: settings.mode, synchronous: settings.synchronous }, 'audit log open');
  return {
    log,
    dataSource,
    async close() {
      await retention?.stop();
      // Refusals counted but not yet summed up in a row are, before the last commit.
      log.summarizeRefusals();
      await writer.close();
      // After the final commit: the log's last rows are named by the last checkpoint.
      checkpoints?.stop();
      await dataSource.destroy();
    },
  };
}
