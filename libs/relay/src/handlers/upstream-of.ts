import type { NameRoute } from '@switchboard/catalog';
import { MissingSecretsError, UnusableSecretError, type ServerConfig } from '@switchboard/config';
import { ErrorCode, McpError, callerName } from '@switchboard/core';
import type { UpstreamConnection } from '@switchboard/upstream';
import type { AuditFacts } from '../audit/audit-facts.js';
import type { RelayServices, RequestContext } from '../relay.types.js';

/**
 * Records the route (upstream, and its own name for the item) for the audit row. Handlers
 * call it before the rate-limit gate, so that a limited request's row names its upstream
 * although no connection was opened for it; tools/call, prompts/get, resources/read and
 * completion/complete before the policy's too, so that a denied request's row names them.
 */
export function recordRoute(facts: AuditFacts, server: string, originalName?: string): void {
  facts.upstream = server;
  facts.originalName = originalName ?? null;
}

/**
 * The connection a request for `server` goes through: the shared one; for an
 * `isolation: per-principal` server the caller's own (opened with their secrets on first
 * use); for a per-session one the session's own (opened on its first request there).
 * Opening one starts a process or an HTTP session, so callers ask only once every gate
 * (policy, approval, rate limits) has let the request through; the route is recorded for
 * the audit row before them (recordRoute).
 */
export async function upstreamOf(
  ctx: Pick<RequestContext, 'session'>,
  services: RelayServices,
  server: string,
): Promise<UpstreamConnection> {
  const config = isolatedConfig(services, server);
  if (config?.isolation === 'per-session' && services.sessionConnections) {
    // A request still running for a session that has just ended must not open a connection
    // nobody would close (closing happens once, when the session is removed).
    if (services.sessions.get(ctx.session.id) !== ctx.session) {
      throw new McpError(ErrorCode.ConnectionClosed, 'Session ended before the request completed');
    }
    return services.sessionConnections.connectionFor(config, ctx.session.id);
  }
  if (config?.isolation === 'per-principal' && services.principalConnections) {
    const principal = callerName(ctx.session.principal);
    try {
      return await services.principalConnections.connectionFor(config, principal);
    } catch (err) {
      if (err instanceof UnusableSecretError) {
        const command = `switchboard secrets set --principal ${principal} ${err.secret} < FILE`;
        throw new McpError(ErrorCode.UpstreamUnavailable, `Upstream '${server}' cannot use your secret ${err.secret}: it ${err.why}; an administrator sets it again with: ${command}`, {
          server,
          unusableSecret: err.secret,
        });
      }
      if (!(err instanceof MissingSecretsError)) throw err;
      // The caller learns which of *their* secrets is missing, and the very commands that set
      // them, to pass on to an administrator.
      const several = err.missing.length > 1;
      const commands = err.missing.map((name) => `switchboard secrets set --principal ${principal} ${name} < FILE`);
      throw new McpError(
        ErrorCode.UpstreamUnavailable,
        `Upstream '${server}' needs your secret${several ? 's' : ''} ${err.missing.join(', ')}; ` +
          `an administrator sets ${several ? 'them' : 'it'} with: ${commands.join('; ')}`,
        { server, missingSecrets: err.missing },
      );
    }
  }
  const connection = services.registry.get(server);
  if (!connection) {
    throw new McpError(ErrorCode.UpstreamUnavailable, `Upstream '${server}' is not available`, { server });
  }
  return connection;
}

/**
 * For a name the catalog remembers of an upstream that went away (CatalogStore's
 * departedTool): once the upstream is back, its lists are read again, and until that read
 * ends the name is still missing although the upstream is ready. Waits for that read (at
 * most the server's requestMs, what one page of it may take), so the caller can resolve the
 * name against what the upstream offers now. At once when no read is under way.
 */
/** How a handler looks up one kind of name (tools, prompts), and who may hear its upstream is down. */
export interface NameLookup {
  resolve(publicName: string): NameRoute | undefined;
  /** The catalog's memory of a name whose upstream is down (CatalogStore's departedTool). */
  departed(publicName: string): NameRoute | undefined;
  /** Whether the caller may be told of the name's upstream: the policy would let it use the name there. */
  mayUse(server: string): boolean;
}

/**
 * For a public tool or prompt name the catalog does not resolve: the route to give after all,
 * or undefined (the caller answers "unknown"). A name of an upstream that is down is said to
 * be so (-32010) to those the policy lets use it; one just back, its lists still being read,
 * is looked up again once they are read, so what it offers now decides. Called only on a
 * miss, so a resolved call pays for none of it.
 */
export async function routeOfDeparted(services: RelayServices, publicName: string, lookup: NameLookup, facts: AuditFacts): Promise<NameRoute | undefined> {
  const departed = lookup.departed(publicName);
  if (!departed) return undefined;
  if (!lookup.mayUse(departed.server)) {
    // Answered as unknown (a denial looks like absence), but the row names whose it was, as
    // a denial's row does while the upstream is up.
    recordRoute(facts, departed.server, departed.name);
    return undefined;
  }
  await listsReadAgain(services, departed.server);
  const now = lookup.resolve(publicName);
  if (!now && lookup.departed(publicName)) throw upstreamDown(services, departed.server, departed.name, facts);
  return now;
}

export function listsReadAgain(services: RelayServices, server: string): Promise<void> {
  const config = services.config().servers.find((s) => s.name === server);
  return services.sync.listsRead(server, config?.timeouts.requestMs ?? 0);
}

/**
 * The error for a name whose upstream is down (the catalog remembers it: CatalogStore's
 * departedTool): -32010 with the server and its state, as for a call that reaches a down
 * connection. Records the route for the audit row. An upstream that is back but whose
 * lists were still not read again (listsReadAgain gave up) is said to be so, not to be
 * unavailable while its state says ready.
 */
export function upstreamDown(services: RelayServices, server: string, originalName: string, facts: AuditFacts): McpError {
  recordRoute(facts, server, originalName);
  const connection = services.registry.get(server);
  const state = connection?.state ?? 'down';
  if (connection?.isAvailable) {
    return new McpError(
      ErrorCode.UpstreamUnavailable,
      `Upstream '${server}' has reconnected (${state}) but its lists have not been read again yet; try again shortly`,
      { server, state },
    );
  }
  return new McpError(ErrorCode.UpstreamUnavailable, `Upstream '${server}' is not available (${state})`, { server, state });
}

/** The server's config when it is per-principal or per-session; undefined for shared ones. */
export function isolatedConfig(services: RelayServices, server: string): ServerConfig | undefined {
  const config = services.config().servers.find((s) => s.name === server);
  return config && config.isolation !== 'shared' ? config : undefined;
}
