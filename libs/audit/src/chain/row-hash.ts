import { hash } from 'node:crypto';
import type { AuditEntry } from '../audit.types.js';

/**
 * A row as stored (`audit_entry.record`) and as hashed: a JSON array of every field, id
 * first (so renumbering shows), in a fixed order. JSON keeps types apart ("1" vs 1, null
 * vs "null") without a hand-written escaping scheme. The `audit_record` view reads the
 * fields back by position, so this order is part of the schema.
 *
 * Built from the entry's fields one by one: a spread copy of a 25-field object costs
 * several times what the rest of this does.
 */
export function recordText(id: number, row: AuditEntry): string {
  return JSON.stringify([
    id,
    row.at,
    row.principal,
    row.authMethod,
    row.sessionId,
    row.transport,
    row.clientName,
    row.clientVersion,
    row.protocolVersion,
    row.upstream,
    row.method,
    row.name,
    row.originalName,
    row.arguments,
    row.argumentsTruncated ? 1 : 0,
    row.argumentsDigest,
    row.decision,
    row.rule,
    row.outcome,
    row.errorCode,
    row.errorMessage,
    row.latencyMs,
    row.responseBytes,
    row.requestId,
    row.traceId,
  ]);
}

/** A row's hash: SHA-256 over the previous row's hash, a newline, and the row's record text. */
export function chainHash(prevHash: string, record: string): string {
  return hash('sha256', `${prevHash}\n${record}`);
}
