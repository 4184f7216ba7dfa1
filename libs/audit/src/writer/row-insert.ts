import type { SqliteConnection, SqliteStatement } from '@switchboard/persistence';
import type { AuditEntry, AuditRow } from '../audit.types.js';
import { readChainHead } from '../chain/chain-head.js';
import { rowHash } from '../chain/row-hash.js';

const COLUMNS = [
  'id', 'at', 'principal', 'auth_method', 'session_id', 'transport', 'client_name', 'client_version',
  'protocol_version', 'upstream', 'method', 'name', 'original_name', 'arguments', 'arguments_truncated',
  'arguments_digest', 'decision', 'rule', 'outcome', 'error_code', 'error_message', 'latency_ms',
  'response_bytes', 'request_id', 'trace_id', 'prev_hash', 'hash',
];

/**
 * Appends entries as chained rows in one IMMEDIATE transaction: the chain head is read
 * under the write lock, so the ids and hashes stay consecutive even if another process
 * writes to the same file. Prepared once; better-sqlite3 is synchronous, so a batch
 * commits within one turn of the event loop.
 */
export class RowInserter {
  private readonly insert: SqliteStatement;
  private readonly appendAll: (entries: readonly AuditEntry[]) => number;

  constructor(db: SqliteConnection) {
    this.insert = db.prepare(
      `INSERT INTO audit_record (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`,
    );
    const tx = db.transaction((entries: readonly AuditEntry[]) => {
      let head = readChainHead(db);
      for (const entry of entries) {
        const row: Omit<AuditRow, 'hash'> = { ...entry, id: head.id + 1, prevHash: head.hash };
        const hash = rowHash(row);
        this.insert.run(
          row.id, row.at, row.principal, row.authMethod, row.sessionId, row.transport, row.clientName,
          row.clientVersion, row.protocolVersion, row.upstream, row.method, row.name, row.originalName,
          row.arguments, row.argumentsTruncated ? 1 : 0, row.argumentsDigest, row.decision, row.rule,
          row.outcome, row.errorCode, row.errorMessage, row.latencyMs, row.responseBytes, row.requestId,
          row.traceId, row.prevHash, hash,
        );
        head = { id: row.id, hash };
      }
      return head.id;
    });
    this.appendAll = (entries) => (tx as unknown as { immediate: typeof tx }).immediate(entries);
  }

  /** Commits every entry or none; returns the id of the last row. Throws what SQLite threw. */
  append(entries: readonly AuditEntry[]): number {
    return this.appendAll(entries);
  }
}
