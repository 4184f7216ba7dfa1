import type { CredentialLapse, DownstreamDeps, SessionOwner } from '../downstream.types.js';

/** How often sessions are checked against credentialLapse: a revoked key's session ends within this. */
export const CREDENTIAL_CHECK_MS = 2_000;

/** What the check needs of a session: its id, transport and owner. */
interface CheckedSession {
  session: { id: string; transport: string; principal: SessionOwner };
}

/**
 * Starts the check of every session's credential (a transport's sessions by id); returns what
 * stops it. A session whose credential has lapsed is ended, streams, open answers and calls in
 * flight with it, and the end is a warning in the log and a row in the audit log (onLapse):
 * a revocation is a security event, and its holder's streams going quiet would otherwise
 * leave no trace.
 */
export function startCredentialCheck(deps: DownstreamDeps, sessions: ReadonlyMap<string, CheckedSession>, end: (id: string) => void): () => void {
  const credentialLapse = deps.credentialLapse;
  if (!credentialLapse) return () => undefined;
  const timer = setInterval(() => {
    for (const [id, { session }] of [...sessions]) {
      const lapse = credentialLapse(session.principal);
      if (lapse === undefined) continue;
      deps.logger.warn({ session: id, principal: session.principal.id, rule: lapse.rule }, `ended a session: its credential no longer holds (${lapse.reason})`);
      end(id);
      deps.onCredentialLapse?.({ sessionId: id, transport: session.transport, principal: session.principal, ...lapse });
    }
  }, CREDENTIAL_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
