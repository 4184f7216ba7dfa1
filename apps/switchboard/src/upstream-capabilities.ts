import type { ServerConfig } from '@switchboard/config';
import { sessionClientCapabilities, type SessionDirectory } from '@switchboard/relay';

/**
 * What the gateway declares to shared and per-principal upstreams, which serve many hosts:
 * it relays these to the host that caused them, or to the web inbox (elicitations), and
 * answers -32602 when nobody can (relay/server-requests).
 */
export const RELAYED_CAPABILITIES = { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } };

/**
 * What a per-session connection declares: what its session's host can answer, in its
 * revision (plus roots when they are pinned, and both elicitation modes while the web inbox
 * is on, since it takes the elicitations a host cannot: `relay.inbox`).
 */
export function sessionCapabilitiesFor(sessions: SessionDirectory, inboxEnabled: () => boolean) {
  return (server: ServerConfig, sessionId: string): Record<string, unknown> => {
    const session = sessions.get(sessionId);
    return sessionClientCapabilities(session?.clientCapabilities ?? {}, {
      protocolVersion: session?.protocolVersion ?? '',
      pinnedRoots: server.roots !== undefined,
      inboxEnabled,
    });
  };
}
