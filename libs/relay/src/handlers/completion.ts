import { ErrorCode, McpError, invalidParams } from '@switchboard/core';
import type { UpstreamConnection } from '@switchboard/upstream';
import type { Item, MethodHandler, RelayServices } from '../relay.types.js';
import { optionalObject, optionalStringMap, requireString } from './params.js';
import { authorized } from '../gates/policy-gate.js';
import { rateLimited } from '../gates/rate-limited.js';
import { recordRoute, upstreamOf } from './upstream-of.js';
import { checkedResult } from '../results/checked-result.js';
import { withinCompletionLimit } from '../results/completion-values.js';
import { completionResultProblems } from '../results/result-problems.js';

const EMPTY = { completion: { values: [], hasMore: false } };

/** Maps the public prompt name or resource template URI in `ref` back to its upstream. */
function resolveRef(services: RelayServices, ref: Item): { server: string; ref: Item } {
  const catalog = services.catalog.current;
  if (ref.type === 'ref/prompt') {
    const name = requireString(ref, 'name');
    const target = catalog.resolvePrompt(name);
    if (!target) throw invalidParams(`Unknown prompt: ${name}`);
    return { server: target.server, ref: { ...ref, name: target.name } };
  }
  if (ref.type === 'ref/resource') {
    const uri = requireString(ref, 'uri');
    const template = catalog.resolveTemplate(uri);
    if (template) return { server: template.server, ref: { ...ref, uri: template.uriTemplate } };
    const resource = catalog.resolveResource(uri);
    if (resource) return { server: resource.server, ref: { ...ref, uri: resource.uri } };
    throw invalidParams(`Unknown resource: ${uri}`);
  }
  throw invalidParams("Invalid params: 'ref.type' must be 'ref/prompt' or 'ref/resource'");
}

/**
 * `argument` is `{name, value}` of strings and `context.arguments` a map of strings: checked
 * here, since the upstream's own check would reach the host as an internal error (-32603).
 */
function checkArgument(params: Item): void {
  const argument = optionalObject(params, 'argument');
  if (!argument) throw invalidParams("Invalid params: 'argument' is required");
  for (const field of ['name', 'value']) {
    if (typeof argument[field] !== 'string') throw invalidParams(`Invalid params: 'argument.${field}' must be a string`);
  }
  const context = optionalObject(params, 'context');
  if (context) optionalStringMap(context, 'arguments', 'context.arguments');
}

export const complete: MethodHandler = async (ctx, services) => {
  const ref = optionalObject(ctx.params, 'ref');
  if (!ref) throw invalidParams("Invalid params: 'ref' is required");
  checkArgument(ctx.params);
  ctx.audit.deniedBy = 'catalog:unknown-ref';
  const target = resolveRef(services, ref);
  // Resolved: a rule set from here on is one that refused it (runAudited reads any as a denial).
  ctx.audit.deniedBy = null;
  // Recorded before the policy gate (tools-call.ts): a denied completion's row names the
  // upstream and its own name too; the caller is still answered as for an unknown ref.
  recordRoute(ctx.audit, target.server, (target.ref.name ?? target.ref.uri) as string);
  // Completing a name's arguments is using the prompt or template: the policy says whether.
  const allowed =
    ref.type === 'ref/prompt'
      ? authorized(ctx, services, 'complete', 'Prompt', { server: target.server, name: String(ref.name) })
      : authorized(ctx, services, 'complete', 'Resource', { server: target.server, uri: String(target.ref.uri) });
  if (!allowed) throw invalidParams(ref.type === 'ref/prompt' ? `Unknown prompt: ${String(ref.name)}` : `Unknown resource: ${String(ref.uri)}`);
  // Opened past the rate limits: a refused request starts no upstream process (tools-call.ts).
  return rateLimited(ctx, services, target.server, async () => {
    const connection = await upstreamOf(ctx, services, target.server);
    // An upstream without completions simply has no suggestions; that is not an error for the host.
    if (!mayComplete(connection)) return EMPTY;
    let result: Item;
    try {
      result = await services.forwarder.forward(ctx.session, ctx.request, connection, { ...ctx.params, ref: target.ref }, ctx);
    } catch (err) {
      // A 2024-11-05 server that was only possibly completing (below) and does not.
      if (!connection.capabilities.completions && err instanceof McpError && err.code === ErrorCode.MethodNotFound) return EMPTY;
      throw err;
    }
    const subject = ref.type === 'ref/prompt' ? `prompt '${String(ref.name)}'` : `resource '${String(ref.uri)}'`;
    checkedResult(services, target.server, 'completion/complete', subject, result, completionResultProblems(result));
    return withinCompletionLimit(result);
  });
};

/**
 * Whether an upstream may answer completion/complete. The `completions` capability came with
 * 2025-03-26; a 2024-11-05 server had the method without any capability to declare it, so
 * one that offers prompts or resources (what completions are for) may complete, and is asked.
 */
export function mayComplete(connection: Pick<UpstreamConnection, 'capabilities' | 'protocolVersion'>): boolean {
  const c = connection.capabilities;
  if (c.completions) return true;
  return connection.protocolVersion === '2024-11-05' && Boolean(c.prompts || c.resources);
}
