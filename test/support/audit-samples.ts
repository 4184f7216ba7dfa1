import { AuditWriter, InlineCommitter, type AuditEntry } from '@switchboard/audit';
import type { GatewayConfig } from '@switchboard/config';
import { silentLogger } from '@switchboard/observability';
import { sqliteConnection } from '@switchboard/persistence';
import { openMigrated } from '../../apps/switchboard/src/audit-store.js';
import { entry as sampleEntry } from '../../libs/audit/test-support/temp-db.js';

/**
 * Sample audit rows and the way to commit them, for the tests of the `switchboard audit`
 * readers (audit-cli.e2e-spec.ts) and of `audit verify` (audit-verify.e2e-spec.ts).
 */

export const NOW = Date.now();
export const MINUTE = 60_000;

/** The shared sample row as a tools/call of fx__echo by alice, with the fields a test is about. */
export const entry = (fields: Partial<AuditEntry>): AuditEntry =>
  sampleEntry({
    at: NOW,
    principal: 'alice',
    authMethod: 'loopback',
    upstream: 'fx',
    name: 'fx__echo',
    originalName: 'echo',
    latencyMs: 12.5,
    responseBytes: 100,
    ...fields,
  });

/**
 * Five rows that exercise the readers: two older than 90 minutes, a denial, a read that is not
 * a tool call, and text that CSV must quote (comma, quote, CRLF) or neutralise (a formula).
 */
export const ENTRIES: AuditEntry[] = [
  entry({ at: NOW - 180 * MINUTE, arguments: '{"text":"a,b \\"quoted\\""}', errorMessage: 'line1\r\nline2' }),
  entry({ at: NOW - 120 * MINUTE, principal: 'bob', outcome: 'tool_error' }),
  entry({
    at: NOW - 30 * MINUTE,
    name: 'fx__nope',
    originalName: null,
    upstream: null,
    decision: 'denied',
    rule: 'catalog:unknown-tool',
    outcome: null,
    errorCode: -32602,
    errorMessage: 'Unknown tool: fx__nope',
  }),
  entry({
    at: NOW - 20 * MINUTE,
    method: 'resources/read',
    name: 'fixture://static/hello',
    originalName: 'fixture://static/hello',
    arguments: null,
    argumentsDigest: null,
  }),
  entry({
    at: NOW - 10 * MINUTE,
    principal: '=HYPERLINK("http://evil.example")',
    name: 'fx__add',
    originalName: 'add',
    arguments: '{"a":1,"b":2}',
    outcome: 'error',
    errorCode: -32603,
    errorMessage: 'Internal error',
  }),
];

/** Rows as the daemon writes them: through the real group-commit writer, committed. */
export async function appendRows(config: GatewayConfig, entries: AuditEntry[]): Promise<void> {
  const { dataSource } = await openMigrated(config);
  const writer = new AuditWriter(new InlineCommitter(sqliteConnection(dataSource)), { mode: 'strict', flushMs: 10, maxQueuedRows: 1000, logger: silentLogger() });
  const committed = entries.map((e) => writer.append(e));
  await writer.flush();
  await Promise.all(committed);
  await writer.close();
  await dataSource.destroy();
}
