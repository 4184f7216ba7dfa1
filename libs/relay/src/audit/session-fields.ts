import type { AuditEntry } from '@switchboard/audit';
import type { DownstreamSession } from '../session.js';

type SessionFields = Pick<AuditEntry, 'principal' | 'authMethod' | 'sessionId' | 'transport' | 'clientName' | 'clientVersion' | 'protocolVersion'>;

/** The audit row's fields that say who asked, and through which host and session. */
export function sessionFields(session: DownstreamSession): SessionFields {
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
