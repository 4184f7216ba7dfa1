import { bareEntry } from '@switchboard/audit';
import type { ServerRequest, ServerRequestHandler } from '@switchboard/upstream';
import { sessionFields } from '../audit/session-fields.js';
import type { Item, RelayServices } from '../relay.types.js';
import type { DownstreamSession } from '../session.js';
import { isRelayOrigin } from './relay-origin.js';

/**
 * Answers roots/list itself for a server whose roots are pinned in the config (exactly those
 * roots, read from the current config so a reload applies at once; no host is asked), and
 * hands every other request to `relay`. Each pinned answer is an audit row with the rule
 * `relay:pinned-roots`, under the session it was for when that is known.
 */
export function answeringPinnedRoots(services: RelayServices, relay: ServerRequestHandler): ServerRequestHandler {
  return async (req) => {
    if (req.request.method !== 'roots/list') return relay(req);
    const pinned = services.config().servers.find((s) => s.name === req.connection.name)?.roots;
    if (pinned === undefined) return relay(req);
    const result = { roots: pinned.map((root) => ({ ...root })) };
    await record(services, req, result);
    return result;
  };
}

/** The session the question came for: a per-session connection's owner, or the one host with a request in flight. */
function sessionOf(services: RelayServices, req: ServerRequest): DownstreamSession | undefined {
  const owner = services.sessionConnections?.ownerOf(req.connection);
  if (owner !== undefined) return services.sessions.get(owner);
  const sessions = new Set(req.candidates.filter(isRelayOrigin).map((o) => o.session));
  return sessions.size === 1 ? [...sessions][0] : undefined;
}

async function record(services: RelayServices, req: ServerRequest, result: Item): Promise<void> {
  if (!services.audit) return;
  const session = sessionOf(services, req);
  const owner = services.principalConnections?.ownerOf(req.connection);
  const entry = bareEntry({
    // Nobody but the gateway took part when no session or owner is known.
    ...sessionFields(session, owner === undefined ? { principal: 'switchboard', authMethod: 'internal' } : { principal: owner, authMethod: 'none' }),
    upstream: req.connection.name,
    method: 'roots/list',
    decision: 'allowed',
    rule: 'relay:pinned-roots',
    outcome: 'ok',
    errorMessage: null,
    latencyMs: 0,
    responseBytes: Buffer.byteLength(JSON.stringify(result)),
    requestId: String(req.request.id),
  });
  await services.audit.record(entry, { request: req.request.params ?? {}, answer: result }, null).catch(() => undefined);
}
