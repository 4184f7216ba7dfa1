import { ErrorCode, McpError, invalidParams } from '@switchboard/core';
import { unnormalizedPath } from '@switchboard/policy';
import type { MethodHandler, RelayServices } from '../relay.types.js';
import { requireString } from './params.js';
import { publicUrisInContents, servesResources } from './uri-mapping.js';
import { authorized } from '../gates/policy-gate.js';
import { rateLimited } from '../gates/rate-limited.js';
import { recordRoute, upstreamOf } from './upstream-of.js';
import type { AuditFacts } from '../audit/audit-facts.js';
import { readResultProblems } from '../results/result-problems.js';
import { checkedResult } from '../results/checked-result.js';

/** `facts`: a read's audit row, which says why a URI was refused (unknown, or of a form refused). */
function resolve(services: RelayServices, uri: string, facts?: AuditFacts): { server: string; uri: string } {
  const target = services.catalog.current.resolveResource(uri);
  // Both: the URI as sent, and the upstream's one a gateway URI wraps.
  const odd = unnormalizedPath(uri) ?? (target && unnormalizedPath(target.uri));
  if (odd) {
    // Often a path traversal tried; an auditor must not read it as a resource that is not there.
    if (facts) facts.deniedBy = 'request:unnormalized-uri';
    throw invalidParams(`Invalid params: 'uri' ${odd}`);
  }
  if (!target || !servesResources(services, target.server)) {
    if (facts) facts.deniedBy = 'catalog:unknown-resource';
    throw notFound(uri);
  }
  return target;
}

// Legacy-era peers know "resource not found" as -32002 (the 2026 revision uses -32602).
const notFound = (uri: string) => new McpError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });

export const readResource: MethodHandler = async (ctx, services) => {
  const uri = requireString(ctx.params, 'uri');
  const target = resolve(services, uri, ctx.audit);
  // Judged by the URI the upstream will read, whatever spelling the host used (a
  // switchboard://SERVER/... gateway URI wraps it): rules name the upstreams' URIs.
  // The policy also judges the URI as an SDK server reads it (PolicyEngine.decide).
  // Recorded before the policy gate (tools-call.ts): a denied read's row names the upstream
  // and its URI too; the caller is still answered as for a URI that is not there.
  recordRoute(ctx.audit, target.server, target.uri);
  if (!authorized(ctx, services, 'read', 'Resource', { server: target.server, uri: target.uri })) throw notFound(uri);
  // Opened past the rate limits: a refused request starts no upstream process (tools-call.ts).
  const result = await rateLimited(ctx, services, target.server, async () => {
    const connection = await upstreamOf(ctx, services, target.server);
    return services.forwarder.forward(ctx.session, ctx.request, connection, { ...ctx.params, uri: target.uri }, ctx);
  }).catch((err: unknown) => {
    throw upstreamNotFound(err, target.uri) ? notFound(uri) : err;
  });
  checkedResult(services, target.server, 'resources/read', `resource '${uri}'`, result, readResultProblems(result));
  return publicUrisInContents(services.catalog.current, target.server, result);
};

/**
 * Whether an upstream's error says it has no resource at `upstreamUri`: -32002, or the 2026
 * revision's -32602 naming the URI in `data.uri` (what SDK 2.x servers send whatever
 * revision they speak). Either way the host hears -32002 with the URI it asked for, as
 * the gateway answers a URI it does not know itself, not the upstream's spelling of it.
 */
function upstreamNotFound(err: unknown, upstreamUri: string): boolean {
  if (!(err instanceof McpError)) return false;
  if (err.code === ErrorCode.ResourceNotFound) return true;
  const data = err.data as { uri?: unknown } | undefined;
  return err.code === ErrorCode.InvalidParams && typeof data === 'object' && data !== null && data.uri === upstreamUri;
}

export const subscribe: MethodHandler = async (ctx, services) => {
  const { session, params } = ctx;
  const uri = requireString(params, 'uri');
  // A session that was not given resources.subscribe at initialize would never hear of
  // updates (notifications go by what was negotiated): refused, as a server without the
  // capability refuses it, rather than accepted and left silent.
  if (!(session.serverCapabilities?.resources as Record<string, unknown> | undefined)?.subscribe) {
    throw new McpError(ErrorCode.MethodNotFound, 'Resource subscriptions were not negotiated for this session');
  }
  // Recorded as a read is: a subscription is what lets a principal hear of a resource's changes.
  const target = resolve(services, uri, ctx.audit);
  recordRoute(ctx.audit, target.server, target.uri);
  if (!authorized(ctx, services, 'subscribe', 'Resource', { server: target.server, uri: target.uri })) throw notFound(uri);
  const connection = await upstreamOf(ctx, services, target.server);
  const caps = connection.capabilities.resources as Record<string, unknown> | undefined;
  if (!caps?.subscribe) {
    throw new McpError(ErrorCode.MethodNotFound, `Upstream '${target.server}' does not support resource subscriptions`);
  }
  await services.subscriptions.subscribe(session, connection, target.uri, uri, ctx.signal).catch((err: unknown) => {
    // The session's cap on subscriptions (its only -31429): the row says limited, as a rate limit's does.
    if (err instanceof McpError && err.code === ErrorCode.RateLimited) ctx.audit.limitedBy = 'limit:subscriptions';
    throw err;
  });
  return {};
};

export const unsubscribe: MethodHandler = async ({ session, params }, services) => {
  const uri = requireString(params, 'uri');
  // By the URI the host subscribed with first: while its upstream is down the catalog no
  // longer knows it, and the subscription would come back with the upstream.
  if (await services.subscriptions.unsubscribeByPublicUri(session, uri)) return {};
  const target = resolve(services, uri);
  await services.subscriptions.unsubscribe(session, target.server, target.uri);
  return {};
};
