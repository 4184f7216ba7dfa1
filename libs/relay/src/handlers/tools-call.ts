import { ErrorCode, McpError, invalidParams } from '@switchboard/core';
import type { MethodHandler } from '../relay.types.js';
import { optionalObject, requireString } from './params.js';
import { publicUrisInContent, servesResources } from './uri-mapping.js';
import { authorized } from '../gates/policy-gate.js';
import { rateLimited } from '../gates/rate-limited.js';
import { approved } from '../gates/approval-gate.js';
import { recordRoute, routeOfDeparted, upstreamOf } from './upstream-of.js';
import { toolResultProblems } from '../results/result-problems.js';
import { checkedResult } from '../results/checked-result.js';
import { knowsStructuredContent } from '../revision/revision-fields.js';

/**
 * tools/call: the public name is resolved to (upstream, original name) by the catalog and the
 * call forwarded with the original name. The audit row is written around this by the dispatcher
 * (audit/audited-request.ts). The gates run here: the policy (gates/policy-gate.ts), a
 * human's approval when a `confirm` rule asks for one (gates/approval-gate.ts), then the rate
 * limits (gates/rate-limited.ts), and only then is the upstream connection opened. Approval comes before the rate limits: a call waiting minutes for a human must not hold one of the upstream's
 * concurrency slots, and a call the human refuses spends no quota.
 */
export const callTool: MethodHandler = async (ctx, services) => {
  const publicName = requireString(ctx.params, 'name');
  // Checked here, not left to the upstream: the policy's `args` conditions must see what the
  // upstream would be sent.
  const args = optionalObject(ctx.params, 'arguments') ?? {};
  const target =
    services.catalog.current.resolveTool(publicName) ??
    (await routeOfDeparted(
      services,
      publicName,
      {
        resolve: (name) => services.catalog.current.resolveTool(name),
        departed: (name) => services.catalog.departedTool(name),
        mayUse: (server) => authorized(ctx, services, 'call', 'Tool', { server, name: publicName, args }),
      },
      ctx.audit,
    ));
  if (!target) {
    // Unless the policy hid a tool of a down upstream (its rule stays), or the read found it gone.
    if (!services.catalog.departedTool(publicName)) ctx.audit.deniedBy = 'catalog:unknown-tool';
    throw invalidParams(`Unknown tool: ${publicName}`);
  }
  // Recorded before any gate: a refused call's row then names the upstream and its own name
  // for the tool as an allowed one's does, so filtering by either (`audit export --tool`,
  // `--upstream`, stats per upstream) finds the denials too. Only the row says so: a policy
  // denial is still answered as an unknown name.
  recordRoute(ctx.audit, target.server, target.name);
  if (!authorized(ctx, services, 'call', 'Tool', { server: target.server, name: publicName, args })) {
    throw invalidParams(`Unknown tool: ${publicName}`);
  }
  // After the policy: to a caller it hides the tool from, a held-back tool is as unknown as any other.
  if (services.pins?.isQuarantined(target.server, target.name)) {
    // Unlike a policy denial, the reason is said: the host's user can ask an admin about it.
    ctx.audit.deniedBy = 'pin:quarantined';
    throw invalidParams(
      `Tool ${publicName} is held back: its definition changed since it was pinned, and an administrator must review it (switchboard tools review)`,
    );
  }
  // Only what the upstream runs as a task can be one (ADR 012); asked before anyone is asked to approve it.
  const asTaskByHost = ctx.params.task !== undefined;
  if (asTaskByHost && !services.registry.get(target.server)?.tasks.taskSupportOf(target.name)) {
    ctx.audit.deniedBy = 'task:not-supported';
    throw new McpError(ErrorCode.MethodNotFound, `Tool ${publicName} cannot be called as a task`);
  }
  await approved(ctx, services, { server: target.server, tool: publicName, originalName: target.name, args });
  // The connection is opened inside the gate: a refused call must not start a per-session
  // or per-principal upstream process.
  const result = await rateLimited(ctx, services, target.server, async () => {
    const connection = await upstreamOf(ctx, services, target.server);
    const tasks = services.tasks;
    if (asTaskByHost && tasks) {
      // Answered at once with the gateway's task (ADR 012), the host's progress token and cancel mapped as for any call.
      // The task keeps the call's trace: the questions asked while a host waits on its result join it.
      const tool = { server: target.server, tool: publicName, originalName: target.name, ...(ctx.audit.traceId && { traceId: ctx.audit.traceId }) };
      return services.forwarder.forward(ctx.session, ctx.request, connection, { ...ctx.params, name: target.name }, ctx, tasks.creation(ctx.session, connection, tool));
    }
    // Whether the tool is task-only is known from the lists, read through the registry's
    // connection also for an isolated server; the call goes on its own connection.
    const taskOnly = services.registry.get(target.server)?.tasks.isTaskOnly(target.name) ?? false;
    const send = taskOnly ? connection.tasks.call.bind(connection.tasks) : undefined;
    return services.forwarder.forward(ctx.session, ctx.request, connection, { ...ctx.params, name: target.name }, ctx, { send });
  });
  // A task has no result yet: tasks/result checks it when it comes.
  if (asTaskByHost) return result;
  // A host of a revision before structured content neither sees the outputSchema nor gets
  // structuredContent (shape-for-revision.ts): the schema is nothing it would check.
  const schemas = knowsStructuredContent(ctx.session.protocolVersion) ? services.outputSchemas : undefined;
  if (schemas?.pending) await schemas.pending;
  const problems = toolResultProblems(result, schemas?.checkOf(target.server, target.name));
  checkedResult(services, target.server, 'tools/call', `tool '${publicName}'`, result, problems);
  return publicUrisInContent(services.catalog.current, target.server, result, servesResources(services, target.server));
};
