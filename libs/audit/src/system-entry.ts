import type { AuditEntry } from './audit.types.js';

type Varying = Pick<AuditEntry, 'method' | 'decision' | 'rule' | 'outcome' | 'errorMessage'>;

/**
 * A row the gateway writes about the log itself (`audit/pruned`, `audit/rows-lost`): by
 * principal `switchboard`, with its facts as JSON in `arguments`, chained like any other.
 */
export function systemEntry(fields: Varying, facts: Record<string, unknown>): AuditEntry {
  return {
    at: Date.now(),
    principal: 'switchboard',
    authMethod: 'internal',
    sessionId: null,
    transport: null,
    clientName: null,
    clientVersion: null,
    protocolVersion: null,
    upstream: null,
    name: null,
    originalName: null,
    arguments: JSON.stringify(facts),
    argumentsTruncated: false,
    argumentsDigest: null,
    errorCode: null,
    latencyMs: null,
    responseBytes: null,
    requestId: null,
    traceId: null,
    ...fields,
  };
}
