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
  const kept = (row as KeptText)[KEPT_TEXT];
  if (kept !== undefined) return `[${id}${kept.slice(2)}`;
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

/** Where keepRecordText leaves an entry's record text with id 0. */
const KEPT_TEXT = Symbol('record text with id 0');
type KeptText = AuditEntry & { [KEPT_TEXT]?: string };

/**
 * Remembers on `row` its record text with id 0 (`recordText(0, row)`, as the journal wrote
 * it), so that the commit that numbers it builds its text from that instead of
 * serializing the row again. Only for a row that will not change any more.
 */
export function keepRecordText(row: AuditEntry, textWithIdZero: string): void {
  (row as KeptText)[KEPT_TEXT] = textWithIdZero;
}

/** A row's hash: SHA-256 over the previous row's hash, a newline, and the row's record text. */
export function chainHash(prevHash: string, record: string): string {
  return hash('sha256', `${prevHash}\n${record}`);
}

/**
 * The entry a record text was made from (recordText's inverse; the id is not part of an
 * entry). For rows read back from a journal file; throws on a text recordText cannot make.
 */
export function entryFromRecord(text: string): AuditEntry {
  const f = JSON.parse(text) as unknown[];
  if (!Array.isArray(f) || f.length !== 25 || typeof f[1] !== 'number' || typeof f[2] !== 'string' || typeof f[10] !== 'string') {
    throw new Error('not an audit record');
  }
  return {
    at: f[1],
    principal: f[2],
    authMethod: f[3] as string,
    sessionId: f[4] as string | null,
    transport: f[5] as string | null,
    clientName: f[6] as string | null,
    clientVersion: f[7] as string | null,
    protocolVersion: f[8] as string | null,
    upstream: f[9] as string | null,
    method: f[10],
    name: f[11] as string | null,
    originalName: f[12] as string | null,
    arguments: f[13] as string | null,
    argumentsTruncated: f[14] === 1,
    argumentsDigest: f[15] as string | null,
    decision: f[16] as AuditEntry['decision'],
    rule: f[17] as string | null,
    outcome: f[18] as AuditEntry['outcome'],
    errorCode: f[19] as number | null,
    errorMessage: f[20] as string | null,
    latencyMs: f[21] as number | null,
    responseBytes: f[22] as number | null,
    requestId: f[23] as string | null,
    traceId: f[24] as string | null,
  };
}
