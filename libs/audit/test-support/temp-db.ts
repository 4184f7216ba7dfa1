import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS } from '@switchboard/migrations';
import { silentLogger } from '@switchboard/observability';
import { migrate, openDatabase, sqliteConnection, type SqliteConnection } from '@switchboard/persistence';
import type { DataSource } from 'typeorm';
import { afterEach } from 'vitest';
import { AUDIT_ENTITIES } from '../src/audit-record.entity.js';
import type { AuditEntry } from '../src/audit.types.js';
import { AuditWriter, type AuditMode } from '../src/writer/audit-writer.js';
import { InlineCommitter } from '../src/writer/committer.js';

/** A migrated database in a fresh temp directory: a real file, as the daemon uses. */
export async function tempDatabase(): Promise<{ dataSource: DataSource; db: SqliteConnection; file: string }> {
  const file = join(mkdtempSync(join(tmpdir(), 'sb-audit-')), 'switchboard.sqlite');
  const dataSource = await openDatabase({ file, entities: AUDIT_ENTITIES, migrations: MIGRATIONS, busyTimeoutMs: 50 });
  await migrate(dataSource);
  return { dataSource, db: sqliteConnection(dataSource), file };
}

/** For a spec file: a tempDatabase() maker whose databases are closed after each test. */
export function tempDatabasePerTest(): () => ReturnType<typeof tempDatabase> {
  const open: DataSource[] = [];
  afterEach(async () => {
    for (const ds of open.splice(0)) if (ds.isInitialized) await ds.destroy();
  });
  return async () => {
    const t = await tempDatabase();
    open.push(t.dataSource);
    return t;
  };
}

export function writerFor(db: SqliteConnection, mode: AuditMode = 'strict', maxQueuedRows = 1000): AuditWriter {
  return new AuditWriter(new InlineCommitter(db), { mode, flushMs: 20, maxQueuedRows, logger: silentLogger() });
}

let seq = 0;

/** A plausible tools/call row; override what the test is about. */
export function entry(over: Partial<AuditEntry> = {}): AuditEntry {
  seq += 1;
  return {
    at: Date.now(),
    principal: 'alice',
    authMethod: 'api-key',
    sessionId: 'sess-1',
    transport: 'streamable-http',
    clientName: 'test-host',
    clientVersion: '1.0.0',
    protocolVersion: '2025-06-18',
    upstream: 'demo',
    method: 'tools/call',
    name: 'demo__echo',
    originalName: 'echo',
    arguments: '{"text":"hi"}',
    argumentsTruncated: false,
    argumentsDigest: 'sha256:00',
    decision: 'allowed',
    rule: 'default-allow',
    outcome: 'ok',
    errorCode: null,
    errorMessage: null,
    latencyMs: 1.5,
    responseBytes: 42,
    requestId: String(seq),
    traceId: 'abcd',
    ...over,
  };
}
