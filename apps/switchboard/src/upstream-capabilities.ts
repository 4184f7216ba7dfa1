import type { ServerConfig } from '@switchboard/config';
import { sessionClientCapabilities, type SessionDirectory } from '@switchboard/relay';

/**
 * What the gateway declares to shared and per-principal upstreams, which serve many hosts:
 * it relays these to the host that caused them, and answers -32602 when no host can
 * (relay/server-requests).
 */
export const RELAYED_CAPABILITIES = { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } };

/**
 * What a per-session connection declares: what its session's host can answer (plus roots
 * when they are pinned, and elicitation when the inbox takes it). `inboxEnabled` says
 * whether the web inbox takes elicitations a host cannot; it is off until the inbox
 * exists, which then passes its own switch here.
 */
export function sessionCapabilitiesFor(sessions: SessionDirectory, inboxEnabled: () => boolean = () => false) {
  return (server: ServerConfig, sessionId: string): Record<string, unknown> =>
    sessionClientCapabilities(sessions.get(sessionId)?.clientCapabilities ?? {}, {
      pinnedRoots: server.roots !== undefined,
      inboxEnabled,
    });
}
