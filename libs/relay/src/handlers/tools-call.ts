import { invalidParams } from '@switchboard/core';
import type { MethodHandler } from '../relay.types.js';
import { requireString } from './params.js';
import { publicUrisInContent } from './uri-mapping.js';
import { upstreamOf } from './upstream-of.js';

/**
 * tools/call: the public name is resolved to (upstream, original name) by the catalog and the
 * call forwarded with the original name. The later gates (policy, rate limit, approval, audit)
 * slot in here, in the order architecture.md gives.
 */
export const callTool: MethodHandler = async (ctx, services) => {
  const publicName = requireString(ctx.params, 'name');
  const target = services.catalog.current.resolveTool(publicName);
  if (!target) throw invalidParams(`Unknown tool: ${publicName}`);
  const connection = upstreamOf(services, target.server);
  const result = await services.forwarder.forward(
    ctx.session,
    ctx.request,
    connection,
    { ...ctx.params, name: target.name },
    ctx,
  );
  return publicUrisInContent(services.catalog.current, target.server, result);
};
