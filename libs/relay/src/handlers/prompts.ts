import { invalidParams } from '@switchboard/core';
import type { MethodHandler } from '../relay.types.js';
import { requireString } from './params.js';
import { publicUrisInMessages } from './uri-mapping.js';
import { authorized } from '../gates/policy-gate.js';
import { rateLimited } from '../gates/rate-limited.js';
import { upstreamOf } from './upstream-of.js';

export const getPrompt: MethodHandler = async (ctx, services) => {
  const publicName = requireString(ctx.params, 'name');
  const target = services.catalog.current.resolvePrompt(publicName);
  if (!target) {
    ctx.audit.deniedBy = 'catalog:unknown-prompt';
    throw invalidParams(`Unknown prompt: ${publicName}`);
  }
  if (!authorized(ctx, services, 'get', 'Prompt', { server: target.server, name: publicName, args: ctx.params.arguments ?? {} })) {
    throw invalidParams(`Unknown prompt: ${publicName}`);
  }
  const connection = await upstreamOf(ctx, services, target.server, ctx.audit, target.name);
  const result = await rateLimited(ctx, services, target.server, () =>
    services.forwarder.forward(ctx.session, ctx.request, connection, { ...ctx.params, name: target.name }, ctx),
  );
  return publicUrisInMessages(services.catalog.current, target.server, result);
};
