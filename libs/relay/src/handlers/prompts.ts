import { invalidParams } from '@switchboard/core';
import type { MethodHandler } from '../relay.types.js';
import { optionalStringMap, requireString } from './params.js';
import { publicUrisInMessages } from './uri-mapping.js';
import { authorized } from '../gates/policy-gate.js';
import { rateLimited } from '../gates/rate-limited.js';
import { listsReadAgain, recordRoute, upstreamDown, upstreamOf } from './upstream-of.js';

export const getPrompt: MethodHandler = async (ctx, services) => {
  const publicName = requireString(ctx.params, 'name');
  const args = optionalStringMap(ctx.params, 'arguments') ?? {};
  let target = services.catalog.current.resolvePrompt(publicName);
  if (!target) {
    const departed = services.catalog.departedPrompt(publicName);
    if (departed && authorized(ctx, services, 'get', 'Prompt', { server: departed.server, name: publicName, args })) {
      // As for a tool (tools-call.ts): an upstream just back is asked once its prompts are read.
      await listsReadAgain(services, departed.server);
      target = services.catalog.current.resolvePrompt(publicName);
      if (!target && services.catalog.departedPrompt(publicName)) throw upstreamDown(services, departed.server, departed.name, ctx.audit);
    }
    if (!target) {
      if (!services.catalog.departedPrompt(publicName)) ctx.audit.deniedBy = 'catalog:unknown-prompt';
      throw invalidParams(`Unknown prompt: ${publicName}`);
    }
  }
  if (!authorized(ctx, services, 'get', 'Prompt', { server: target.server, name: publicName, args })) {
    throw invalidParams(`Unknown prompt: ${publicName}`);
  }
  recordRoute(ctx.audit, target.server, target.name);
  // Opened past the rate limits: a refused request starts no upstream process (tools-call.ts).
  const result = await rateLimited(ctx, services, target.server, async () => {
    const connection = await upstreamOf(ctx, services, target.server);
    return services.forwarder.forward(ctx.session, ctx.request, connection, { ...ctx.params, name: target.name }, ctx);
  });
  return publicUrisInMessages(services.catalog.current, target.server, result);
};
