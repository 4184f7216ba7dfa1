import { bareEntry } from '@switchboard/audit';
import { newTraceId } from '@switchboard/core';
import type { ServerRequest, ServerRequestHandler } from '@switchboard/upstream';
import { ownerFields, sessionFields } from '../audit/session-fields.js';
import type { Item, RelayServices } from '../relay.types.js';
import type { DownstreamSession } from '../session.js';
import { isRelayOrigin } from './relay-origin.js';

/**
 * Answers roots/list itself for a server whose roots are pinned in the config (exactly those
 * roots, read from the current config so a reload applies at once; no host is asked), and
 * with no roots for a shared server of a gateway with authentication (below); hands every
 * other request to `relay`. Each such answer is an audit row (`relay:pinned-roots`,
 * `relay:shared-no-roots`), under the session it was for when that is known.
 */
export function answeringPinnedRoots(services: RelayServices, relay: ServerRequestHandler): ServerRequestHandler {
  return async (req) => {
    if (req.request.method !== 'roots/list') return relay(req);
    const config = services.config();
    const server = config.servers.find((s) => s.name === req.connection.name);
    if (server?.roots !== undefined) {
      const result = { roots: server.roots.map((root) => ({ ...root })) };
      await record(services, req, result, 'relay:pinned-roots');
      return result;
    }
    if (config.auth.mode === 'required' && server?.isolation === 'shared' && !isOwnConnection(services, req)) {
      // A shared server serves every principal: one user's roots would become everyone's
      // (the server keeps them for later calls). It gets none; pin its roots in the config,
      // or give it per-principal or per-session isolation, for it to have some.
      const result = { roots: [] };
      await record(services, req, result, 'relay:shared-no-roots');
      return result;
    }
    return relay(req);
  };
}

/** A principal's or a session's own connection (isolation), not the shared one. */
function isOwnConnection(services: RelayServices, req: ServerRequest): boolean {
  return services.principalConnections?.ownerOf(req.connection) !== undefined || services.sessionConnections?.ownerOf(req.connection) !== undefined;
}

/** The session the question came for: a per-session connection's owner, or the one host with a request in flight. */
function sessionOf(services: RelayServices, req: ServerRequest): DownstreamSession | undefined {
  const owner = services.sessionConnections?.ownerOf(req.connection);
  if (owner !== undefined) return services.sessions.get(owner);
  const sessions = new Set(req.candidates.filter(isRelayOrigin).map((o) => o.session));
  return sessions.size === 1 ? [...sessions][0] : undefined;
}

async function record(services: RelayServices, req: ServerRequest, result: Item, rule: string): Promise<void> {
  if (!services.audit) return;
  const session = sessionOf(services, req);
  const owner = services.principalConnections?.ownerOf(req.connection);
  const entry = bareEntry({
    // Nobody but the gateway took part when no session or owner is known.
    ...sessionFields(session, owner === undefined ? { principal: 'switchboard', authMethod: 'internal' } : ownerFields(owner)),
    upstream: req.connection.name,
    method: 'roots/list',
    decision: 'allowed',
    rule,
    outcome: 'ok',
    errorMessage: null,
    latencyMs: 0,
    responseBytes: Buffer.byteLength(JSON.stringify(result)),
    requestId: String(req.request.id),
    traceId: traceOf(req),
  });
  // Answered by the gateway alone: bounded per upstream, which can ask in a loop.
  await services.audit.recordUnrelayed(entry, { request: req.request.params ?? {}, answer: result }, null).catch(() => undefined);
}

/** The trace of the one host request that can have caused it, else a new one (as any row's). */
function traceOf(req: ServerRequest): string {
  const origins = req.candidates.filter(isRelayOrigin);
  return (origins.length === 1 ? origins[0].traceId : undefined) ?? newTraceId();
}
