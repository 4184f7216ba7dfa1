import type { AuditEntry } from './audit.types.js';

type Given = Pick<AuditEntry, 'principal' | 'authMethod' | 'method' | 'decision' | 'rule' | 'outcome' | 'errorMessage'> &
  Partial<AuditEntry>;

/** A row that is not about a host's MCP request: every request-specific field empty. */
export function bareEntry(fields: Given): AuditEntry {
  return {
    at: Date.now(),
    sessionId: null,
    transport: null,
    clientName: null,
    clientVersion: null,
    protocolVersion: null,
    upstream: null,
    name: null,
    originalName: null,
    arguments: null,
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

/**
 * A row the gateway writes about the log itself (`audit/pruned`, `audit/rows-lost`): by
 * principal `switchboard`, with its facts as JSON in `arguments`, chained like any other.
 */
export function systemEntry(
  fields: Pick<AuditEntry, 'method' | 'decision' | 'rule' | 'outcome' | 'errorMessage'> &
    Partial<Pick<AuditEntry, 'upstream' | 'name' | 'originalName'>>,
  facts: Record<string, unknown>,
): AuditEntry {
  return bareEntry({ principal: 'switchboard', authMethod: 'internal', arguments: JSON.stringify(facts), ...fields });
}
