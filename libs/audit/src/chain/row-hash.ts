import { createHash } from 'node:crypto';
import type { AuditRow } from '../audit.types.js';

/**
 * The hash of a row: SHA-256 over the previous row's hash and every field of this one, id
 * included (so renumbering shows), in a fixed order. JSON of an array keeps types apart
 * ("1" vs 1, null vs "null") without a hand-written escaping scheme.
 */
export function rowHash(row: Omit<AuditRow, 'hash'>): string {
  const fields = JSON.stringify([
    row.id,
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
  return createHash('sha256').update(row.prevHash).update('\n').update(fields).digest('hex');
}
