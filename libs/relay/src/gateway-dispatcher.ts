import { ErrorCode, MAX_JSON_DEPTH, McpError, RELATED_TASK_META, callerName, invalidParams, methodNotFound, nestsDeeperThan, type JsonRpcNotification } from '@switchboard/core';
import { complete } from './handlers/completion.js';
import { initialize, ping } from './handlers/lifecycle.js';
import { listPrompts, listResources, listResourceTemplates, listTools } from './handlers/lists.js';
import { pushSharedLogLevel, setLevel } from './handlers/logging.js';
import { getPrompt } from './handlers/prompts.js';
import { readResource, subscribe, unsubscribe } from './handlers/resources.js';
import { callTool } from './handlers/tools-call.js';
import { cancelTask, getTask, getTaskResult, listTasks } from './handlers/tasks.js';
import { TaskRelay } from './tasks/task-relay.js';
import { newAuditFacts } from './audit/audit-facts.js';
import { shapeResult } from './revision/shape-for-revision.js';
import { runAudited } from './audit/audited-request.js';
import type { Item, MethodHandler, RelayServices, RequestContext } from './relay.types.js';
import { ListChangeThrottle } from './list-change-throttle.js';
import type { DownstreamSession } from './session.js';
import { overlongUri } from './uri-limit.js';

/** Every method a host may call on the gateway, and who answers it. */
const METHODS: Record<string, MethodHandler> = {
  initialize,
  ping,
  'tools/list': listTools,
  'tools/call': callTool,
  'prompts/list': listPrompts,
  'prompts/get': getPrompt,
  'resources/list': listResources,
  'resources/templates/list': listResourceTemplates,
  'resources/read': readResource,
  'resources/subscribe': subscribe,
  'resources/unsubscribe': unsubscribe,
  'completion/complete': complete,
  'logging/setLevel': setLevel,
  'tasks/get': getTask,
  'tasks/result': getTaskResult,
  'tasks/list': listTasks,
  'tasks/cancel': cancelTask,
};

/** Methods only a session the gateway relays tasks for has (ADR 012); to others they do not exist. */
const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']);

/**
 * The MCP server the hosts see, independent of transport: one entry for requests and one for
 * notifications. Transports (libs/downstream) only move bytes and manage sessions.
 */
export class GatewayDispatcher {
  private draining = false;
  /**
   * Each session's initialize while it runs. It negotiates the revision at once but may wait
   * seconds for upstreams still connecting (WARM_WAIT_MS); a host that sends requests
   * before its answer (the spec says it SHOULD NOT; over stdio and HTTP+SSE nothing stops
   * it) has them wait for it, rather than hear "Unknown tool" or get a list without the
   * upstreams initialize was waiting for.
   */
  private readonly initializing = new WeakMap<DownstreamSession, Promise<unknown>>();
  /**
   * Each session's roots/list_changed, spaced out as the upstreams' list_changed are (a
   * burst, then one a second, the last change always passed on): each one passed on has
   * every upstream the host is the roots of ask it roots/list again, so a host sending them
   * in a loop had 5,000 become 5,000 questions back to it (or refusals to the upstreams).
   */
  private readonly rootsChanges = new WeakMap<DownstreamSession, ListChangeThrottle>();

  constructor(readonly services: RelayServices) {
    // A session that leaves may have been the one that wanted the most verbose level.
    services.sessions.onClose(() => void pushSharedLogLevel(services, true));
  }

  /** After this, new requests other than ping are refused with -32011 while in-flight ones finish. */
  startDraining(): void {
    this.draining = true;
  }

  async handleRequest(ctx: Omit<RequestContext, 'params' | 'audit'>): Promise<Item> {
    const { request, session } = ctx;
    const handler = Object.hasOwn(METHODS, request.method) ? METHODS[request.method] : undefined;
    if (!handler) throw methodNotFound(request.method);
    if (request.method !== 'initialize' && request.method !== 'ping') {
      const initializing = this.initializing.get(session);
      if (initializing) await initializing.catch(() => undefined);
      if (!session.protocolVersion) throw new McpError(ErrorCode.InvalidRequest, 'The session is not initialized: send initialize first');
    }
    const relaysTasks = this.services.tasks !== undefined && TaskRelay.enabledFor(session);
    if (TASK_METHODS.has(request.method) && !relaysTasks) throw methodNotFound(request.method);
    // Only a tools/call may be a task, and only from a host the gateway relays tasks for.
    const raw = (request.params ?? {}) as Item;
    const params = relaysTasks && request.method === 'tools/call' ? raw : withoutTaskAugmentation(raw);
    const full: RequestContext = { ...ctx, params, audit: newAuditFacts() };
    // Refused before any handler walks them (recorded like any bad params when audited).
    const malformed = malformedParams(request.method, params);
    const draining = this.draining && request.method !== 'ping';
    const { audit } = this.services;
    let result: Item;
    const run = request.method === 'initialize' ? this.tracked(session, handler) : handler;
    try {
      if (audit?.records(request.method)) {
        const refusal = draining ? { rule: 'shutting-down', error: shuttingDown() } : malformed;
        result = await runAudited(audit, run, full, this.services, refusal);
      } else {
        if (draining) throw shuttingDown();
        if (malformed) throw malformed.error;
        result = await run(full, this.services);
      }
    } catch (err) {
      throw sanitize(err);
    }
    // Every result leaves here: this is where it takes the shape of the host's revision.
    return shapeResult(request.method, result, session.protocolVersion);
  }

  /** `initialize` as one the session's other requests wait for while it runs. */
  private tracked(session: DownstreamSession, initialize: MethodHandler): MethodHandler {
    return (ctx, services) => {
      const running = initialize(ctx, services);
      // A second initialize sent meanwhile is refused at once; the first one is what counts.
      if (this.initializing.has(session)) return running;
      this.initializing.set(session, running);
      const done = () => {
        if (this.initializing.get(session) === running) this.initializing.delete(session);
      };
      running.then(done, done);
      return running;
    };
  }

  handleNotification(session: DownstreamSession, notification: JsonRpcNotification): void {
    if (notification.method === 'notifications/initialized') session.initialized = true;
    if (notification.method === 'notifications/roots/list_changed') this.rootsThrottleOf(session).changed(notification.method);
    // notifications/cancelled and progress are consumed by the session's JSON-RPC peer. Others
    // are ignored, as the spec asks of unknown notifications.
  }

  private rootsThrottleOf(session: DownstreamSession): ListChangeThrottle {
    let throttle = this.rootsChanges.get(session);
    if (!throttle) {
      // A change held back past the session's end has nobody's roots left to announce.
      throttle = new ListChangeThrottle(() => {
        if (this.services.sessions.get(session.id) === session) this.rootsChanged(session);
      });
      this.rootsChanges.set(session, throttle);
    }
    return throttle;
  }

  /**
   * A host's roots changed: every upstream it may be the roots of hears so (the shared ones,
   * the principal's own and the session's own); each asks again with roots/list, which is
   * relayed back. Not a server whose roots are pinned in the config (the gateway answers
   * those itself), nor the connection that only reads an isolated server's lists.
   */
  private rootsChanged(session: DownstreamSession): void {
    const { registry, principalConnections, sessionConnections } = this.services;
    const servers = new Map(this.services.config().servers.map((s) => [s.name, s]));
    const hostRooted = (server: string) => servers.get(server)?.roots === undefined;
    // With authentication, several principals share a shared server: none of them gives it roots (pinned-roots.ts).
    const multiUser = this.services.config().auth.mode === 'required';
    const shared = multiUser ? [] : registry.all().filter((c) => servers.get(c.name)?.isolation === 'shared');
    const own = [
      ...[...(principalConnections?.all() ?? [])].filter((c) => c.owner === callerName(session.principal)),
      ...[...(sessionConnections?.all() ?? [])].filter((c) => c.owner === session.id),
    ].map((c) => c.connection);
    for (const connection of [...shared, ...own]) {
      if (connection.isAvailable && hostRooted(connection.name)) void connection.notify('notifications/roots/list_changed');
    }
  }
}

/**
 * A request's params without `task` (2025-11-25 task augmentation), for every request but
 * the tools/call of a host the gateway relays tasks for (ADR 012). To other hosts the gateway
 * declares no `tasks` capability, and to none a task-augmented request other than tools/call;
 * the spec asks a receiver that did not declare it to process such a request normally,
 * ignoring the augmentation, and so the gateway does: the upstream never sees `task`.
 */
function withoutTaskAugmentation(params: Item): Item {
  if (!('task' in params)) return params;
  const { task: _ignored, ...rest } = params;
  return rest;
}

const validTtl = (ttl: unknown) => ttl === undefined || (Number.isSafeInteger(ttl) && (ttl as number) >= 0);

const shuttingDown = () => new McpError(ErrorCode.ShuttingDown, 'Switchboard is shutting down');

/**
 * What every method's params must be, whatever the method: not nested past the limit, and a
 * `_meta` that is an object with a string or integer `progressToken` (and, if present, a
 * related task with a string `taskId`). Checked here because an upstream built on the SDK
 * drops a request whose `_meta` breaks its message schema without answering, and the host
 * would wait for its timeout. A resource URI past its limit is refused here too, before
 * the catalog, the policy or the audit log's redaction spend time on each of its characters.
 */
function malformedParams(method: string, params: Item): { rule: string; error: McpError } | undefined {
  if (nestsDeeperThan(params, MAX_JSON_DEPTH)) {
    return { rule: 'request:nested-too-deeply', error: invalidParams(`Invalid params: nested deeper than ${MAX_JSON_DEPTH} levels`) };
  }
  const overlong = overlongUri(method, params);
  if (overlong) return overlong;
  const augmentation = params.task;
  if (augmentation !== undefined && (typeof augmentation !== 'object' || augmentation === null || Array.isArray(augmentation) || !validTtl((augmentation as Item).ttl))) {
    return { rule: 'request:invalid-task', error: invalidParams('Invalid params: task must be an object with an optional non-negative integer ttl') };
  }
  const meta = params._meta;
  if (meta === undefined) return undefined;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    return { rule: 'request:invalid-meta', error: invalidParams('Invalid params: _meta must be an object') };
  }
  const token = (meta as Item).progressToken;
  // An integer past 2^53 - 1 was rounded by JSON.parse: progress would carry another token.
  if (token !== undefined && typeof token !== 'string' && !Number.isSafeInteger(token)) {
    return { rule: 'request:invalid-meta', error: invalidParams('Invalid params: _meta.progressToken must be a string or an integer') };
  }
  const task = (meta as Item)[RELATED_TASK_META];
  if (task !== undefined && (typeof task !== 'object' || task === null || typeof (task as Item).taskId !== 'string')) {
    return { rule: 'request:invalid-meta', error: invalidParams(`Invalid params: _meta["${RELATED_TASK_META}"] must be an object with a string taskId`) };
  }
  return undefined;
}

/**
 * Upstream JSON-RPC errors pass through with their code, message and data (hosts need e.g.
 * -32042's data), except internal errors: their data, and all but the first line of their
 * message, may carry an upstream's stack trace.
 */
function sanitize(err: unknown): unknown {
  if (err instanceof McpError && err.code === ErrorCode.InternalError) {
    const firstLine = err.message.split('\n', 1)[0].slice(0, MAX_INTERNAL_MESSAGE);
    if (err.data !== undefined || firstLine !== err.message) return new McpError(err.code, firstLine);
  }
  return err;
}

const MAX_INTERNAL_MESSAGE = 200;
