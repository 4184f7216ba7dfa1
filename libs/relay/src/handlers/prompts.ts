import { invalidParams } from '@switchboard/core';
import type { MethodHandler } from '../relay.types.js';
import { optionalStringMap, requireString } from './params.js';
import { publicUrisInMessages, servesResources } from './uri-mapping.js';
import { authorized } from '../gates/policy-gate.js';
import { rateLimited } from '../gates/rate-limited.js';
import { recordRoute, routeOfDeparted, upstreamOf } from './upstream-of.js';
import { promptResultProblems } from '../results/result-problems.js';
import { checkedResult } from '../results/checked-result.js';

export const getPrompt: MethodHandler = async (ctx, services) => {
  const publicName = requireString(ctx.params, 'name');
  const args = optionalStringMap(ctx.params, 'arguments') ?? {};
  const target =
    services.catalog.current.resolvePrompt(publicName) ??
    (await routeOfDeparted(
      services,
      publicName,
      {
        resolve: (name) => services.catalog.current.resolvePrompt(name),
        departed: (name) => services.catalog.departedPrompt(name),
        mayUse: (server) => authorized(ctx, services, 'get', 'Prompt', { server, name: publicName, args }),
      },
      ctx.audit,
    ));
  if (!target) {
    if (!services.catalog.departedPrompt(publicName)) ctx.audit.deniedBy = 'catalog:unknown-prompt';
    throw invalidParams(`Unknown prompt: ${publicName}`);
  }
  // Recorded before the policy gate, as tools/call does: a denied request's row names the
  // upstream and its own name too; the caller is still answered as for an unknown name.
  recordRoute(ctx.audit, target.server, target.name);
  if (!authorized(ctx, services, 'get', 'Prompt', { server: target.server, name: publicName, args })) {
    throw invalidParams(`Unknown prompt: ${publicName}`);
  }
  // Opened past the rate limits: a refused request starts no upstream process (tools-call.ts).
  const result = await rateLimited(ctx, services, target.server, async () => {
    const connection = await upstreamOf(ctx, services, target.server);
    return services.forwarder.forward(ctx.session, ctx.request, connection, { ...ctx.params, name: target.name }, ctx);
  });
  checkedResult(services, target.server, 'prompts/get', `prompt '${publicName}'`, result, promptResultProblems(result));
  return publicUrisInMessages(services.catalog.current, target.server, result, servesResources(services, target.server));
};
