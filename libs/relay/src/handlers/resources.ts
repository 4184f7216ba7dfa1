import { ErrorCode, McpError } from '@switchboard/core';
import type { MethodHandler, RelayServices } from '../relay.types.js';
import { requireString } from './params.js';
import { publicUrisInContents } from './uri-mapping.js';
import { authorized } from '../gates/policy-gate.js';
import { rateLimited } from '../gates/rate-limited.js';
import { upstreamOf } from './upstream-of.js';

function resolve(services: RelayServices, uri: string): { server: string; uri: string } {
  const target = services.catalog.current.resolveResource(uri);
  if (!target) throw notFound(uri);
  return target;
}

// Legacy-era peers know "resource not found" as -32002 (the 2026 revision uses -32602).
const notFound = (uri: string) => new McpError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });

export const readResource: MethodHandler = async (ctx, services) => {
  const uri = requireString(ctx.params, 'uri');
  ctx.audit.deniedBy = 'catalog:unknown-resource';
  const target = resolve(services, uri);
  if (!authorized(ctx, services, 'read', 'Resource', { server: target.server, uri })) throw notFound(uri);
  const connection = await upstreamOf(ctx, services, target.server, ctx.audit, target.uri);
  const result = await rateLimited(ctx, services, target.server, () =>
    services.forwarder.forward(ctx.session, ctx.request, connection, { ...ctx.params, uri: target.uri }, ctx),
  );
  return publicUrisInContents(services.catalog.current, target.server, result);
};

export const subscribe: MethodHandler = async (ctx, services) => {
  const { session, params } = ctx;
  const uri = requireString(params, 'uri');
  const target = resolve(services, uri);
  if (!authorized(ctx, services, 'subscribe', 'Resource', { server: target.server, uri })) throw notFound(uri);
  const connection = await upstreamOf(ctx, services, target.server);
  const caps = connection.capabilities.resources as Record<string, unknown> | undefined;
  if (!caps?.subscribe) {
    throw new McpError(ErrorCode.MethodNotFound, `Upstream '${target.server}' does not support resource subscriptions`);
  }
  await services.subscriptions.subscribe(session, connection, target.uri, uri);
  return {};
};

export const unsubscribe: MethodHandler = async ({ session, params }, services) => {
  const target = resolve(services, requireString(params, 'uri'));
  await services.subscriptions.unsubscribe(session, target.server, target.uri);
  return {};
};
