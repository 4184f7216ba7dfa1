import type { AuditEntry } from '@switchboard/audit';
import { parseCallerName } from '@switchboard/core';
import type { DownstreamSession } from '../session.js';

type SessionFields = Pick<AuditEntry, 'principal' | 'authMethod' | 'sessionId' | 'transport' | 'clientName' | 'clientVersion' | 'protocolVersion'>;

/**
 * The audit row's fields that say who asked, and through which host and session. Without a
 * session (a relayed request nobody's host took), `nobody` names whom the row is filed under.
 */
export function sessionFields(
  session: DownstreamSession | undefined,
  nobody: Pick<AuditEntry, 'principal' | 'authMethod'> = { principal: 'unknown', authMethod: 'none' },
): SessionFields {
  if (!session) {
    return { ...nobody, sessionId: null, transport: null, clientName: null, clientVersion: null, protocolVersion: null };
  }
  const client = session.clientInfo;
  return {
    principal: session.principal.id,
    authMethod: session.principal.authMethod,
    sessionId: session.id,
    transport: session.transport,
    clientName: typeof client?.name === 'string' ? client.name : null,
    clientVersion: typeof client?.version === 'string' ? client.version : null,
    protocolVersion: session.protocolVersion || null,
  };
}

/** The owner of a per-principal connection (a caller name) as an audit row's principal and method. */
export function ownerFields(owner: string): Pick<AuditEntry, 'principal' | 'authMethod'> {
  const caller = parseCallerName(owner);
  return caller ? { principal: caller.id, authMethod: caller.authMethod } : { principal: owner, authMethod: 'none' };
}
