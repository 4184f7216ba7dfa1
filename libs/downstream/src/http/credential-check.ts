import type { DownstreamDeps, SessionOwner } from '../downstream.types.js';

/** How often sessions are checked against stillValid: a revoked key's stream ends within this. */
export const CREDENTIAL_CHECK_MS = 2_000;

/** Starts the check of every session's credential (a transport's sessions by id); returns what stops it. */
export function startCredentialCheck(
  deps: DownstreamDeps,
  sessions: ReadonlyMap<string, { session: { principal: SessionOwner } }>,
  end: (id: string) => void,
): () => void {
  const stillValid = deps.stillValid;
  if (!stillValid) return () => undefined;
  const timer = setInterval(() => {
    for (const [id, { session }] of [...sessions]) {
      if (stillValid(session.principal)) continue;
      deps.logger.info({ session: id, principal: session.principal.id }, 'ended a session: its credential was revoked or expired');
      end(id);
    }
  }, CREDENTIAL_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
