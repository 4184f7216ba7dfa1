import { LIST_KINDS } from '@switchboard/catalog';
import { ErrorCode, McpError, invalidParams, negotiateVersion } from '@switchboard/core';
import type { UpstreamConnection } from '@switchboard/upstream';
import type { Item, MethodHandler } from '../relay.types.js';
import { principalListView } from './list-view.js';
import { optionalObject } from './params.js';
import { pushSharedLogLevel } from './logging.js';
import { mayComplete } from './completion.js';
import { RELAYED_TASKS_CAPABILITY, TaskRelay } from '../tasks/task-relay.js';

/** How long initialize waits for upstreams still on their first connect, so the first lists are full. */
const WARM_WAIT_MS = 5_000;

export const initialize: MethodHandler = async ({ session, params }, services) => {
  // Once per session: a second one would renegotiate the revision (and the batch rules)
  // under requests already running. Checked before any await, so that two pipelined
  // initialize requests cannot both pass.
  if (session.protocolVersion) throw new McpError(ErrorCode.InvalidRequest, 'Invalid request: the session is already initialized');
  if (typeof params.protocolVersion !== 'string') throw invalidParams("Invalid params: 'protocolVersion' must be a string");
  const capabilities = optionalObject(params, 'capabilities') ?? {};
  const clientInfo = optionalObject(params, 'clientInfo');
  session.protocolVersion = negotiateVersion(params.protocolVersion);
  session.clientCapabilities = capabilities;
  session.clientInfo = clientInfo;

  // A new session wants the default level (info): a quieter level asked by earlier sessions
  // must not silence it. Answered once the upstreams have it, as logging/setLevel is.
  await Promise.all([services.sync.warm(WARM_WAIT_MS), pushSharedLogLevel(services, true)]);
  const upstreams = services.registry.all();
  // An upstream's instructions name it and describe what it serves: what hides all of it from
  // the lists hides them too.
  const views = LIST_KINDS.map((kind) => principalListView(session.principal, kind, services));
  const instructions = mergedInstructions(upstreams.filter((u) => u.instructions && views.some((view) => view.listsSomethingOf(u.name))));
  session.serverCapabilities = advertisedCapabilities(upstreams);
  // Only to a host that speaks tasks, whether or not any upstream runs them now: one may come with a reload (ADR 012).
  if (services.tasks && TaskRelay.enabledFor(session)) session.serverCapabilities.tasks = RELAYED_TASKS_CAPABILITY;
  return {
    protocolVersion: session.protocolVersion,
    capabilities: session.serverCapabilities,
    serverInfo: services.serverInfo,
    ...(instructions ? { instructions } : {}),
  };
};

export const ping: MethodHandler = async () => ({});

/**
 * The union of what the upstreams offer. Tools and logging are always on: tools are the
 * gateway's purpose (upstreams may appear later through a config reload), and the gateway
 * forwards upstream logs. Every list capability has listChanged, since the merged lists change
 * whenever an upstream comes or goes.
 *
 * A session keeps what it was given here for its whole life, so an upstream that is down
 * when a host initializes must not cost that session its prompts or resources for good:
 * one that was up before counts with the capabilities it last had (a connection keeps them
 * while it reconnects), and one never reached yet (still starting, or failing) counts as
 * possibly offering prompts, resources and completions. The price of a guess that turns
 * out wrong is an empty list, where the price of leaving it out would be a list the host
 * never asks for. Subscriptions are only advertised when an upstream said it has them: a
 * host that subscribes must not be refused for a guess.
 */
export function advertisedCapabilities(upstreams: UpstreamConnection[]): Item {
  const caps: Item = { tools: { listChanged: true }, logging: {} };
  for (const u of upstreams) {
    const neverReached = u.protocolVersion === undefined;
    const c = neverReached ? { prompts: {}, resources: {}, completions: {} } : u.capabilities;
    if (c.prompts) caps.prompts = { listChanged: true };
    if (c.resources) {
      const subscribe = Boolean((c.resources as Item).subscribe) || Boolean((caps.resources as Item | undefined)?.subscribe);
      caps.resources = { listChanged: true, ...(subscribe ? { subscribe: true } : {}) };
    }
    if (neverReached || mayComplete(u)) caps.completions = {};
  }
  return caps;
}

function mergedInstructions(upstreams: UpstreamConnection[]): string | undefined {
  const parts = upstreams
    .filter((u) => u.instructions)
    .map((u) => `## ${u.config.alias ?? u.name}\n${u.instructions}`);
  return parts.length ? parts.join('\n\n') : undefined;
}
