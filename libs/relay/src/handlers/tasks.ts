import { Cancellation, ErrorCode, McpError, callerKey, invalidParams, withRelatedTask } from '@switchboard/core';
import type { UpstreamConnection } from '@switchboard/upstream';
import type { Item, MethodHandler, RelayServices, RequestContext } from '../relay.types.js';
import { isTerminal, type RelayedTask } from '../tasks/task-book.js';
import type { TaskRelay } from '../tasks/task-relay.js';
import type { RelayOrigin } from '../server-requests/relay-origin.js';
import { knowsStructuredContent } from '../revision/revision-fields.js';
import { toolResultProblems } from '../results/result-problems.js';
import { checkedResult } from '../results/checked-result.js';
import { publicUrisInContent, servesResources } from './uri-mapping.js';
import { recordRoute } from './upstream-of.js';

/**
 * tasks/get, tasks/result, tasks/list and tasks/cancel for the hosts the gateway relays
 * tasks for (ADR 012); the dispatcher answers others -32601 before any of these runs. A
 * task id that is not the caller's is the unknown-task error, whoever's it is.
 */

export const getTask: MethodHandler = async (ctx, services) => {
  const relay = relayOf(services);
  const task = known(ctx, relay);
  if (!isTerminal(task.status) && !task.unreachable) {
    // The upstream knows best; when it cannot say now, the last known state is the answer.
    const state = await task.via.relayedTasks.get(task.upstreamTaskId, { timeoutMs: task.via.config.timeouts.requestMs }).catch(() => undefined);
    if (state) relay.updated(task, state);
  }
  return { ...relay.book.hostView(task) };
};

/**
 * The task's result, once it ends: asked of the upstream with this request as the origin of
 * the upstream's questions (an elicitation while the task is input_required reaches this
 * host, and its audit row joins the trace of the call that created the task), checked as a
 * tools/call's result is, and related to the gateway's task id. The
 * host's cancel of this request ends this request only, upstream too; the task runs on.
 */
export const getTaskResult: MethodHandler = async (ctx, services) => {
  const relay = relayOf(services);
  const task = known(ctx, relay);
  recordRoute(ctx.audit, task.upstream, task.originalName);
  ctx.audit.name = task.tool;
  if (task.unreachable) {
    throw new McpError(ErrorCode.ConnectionClosed, `Upstream '${task.upstream}' can no longer be asked for the task's result: ${task.statusMessage ?? 'its connection is gone'}`);
  }
  const connection = task.via;
  const ended = new Cancellation();
  const endQuestions = () => ended.abort();
  ctx.signal.addEventListener('abort', endQuestions, { once: true });
  // Its questions' rows join the trace of the call that created the task (not this request's own).
  const origin: RelayOrigin = { session: ctx.session, requestId: ctx.request.id, signal: ended, ...(task.traceId !== undefined && { traceId: task.traceId }) };
  // Past its ttl and the margin the task is forgotten anyway: no reason to wait longer.
  const left = Math.max(1, relay.book.keptUntil(task) - Date.now());
  let result: Item;
  try {
    // No idle timeout: it waits for the task, however long it runs (and the connection's loss ends it).
    result = await connection.relayedTasks.result(task.upstreamTaskId, { signal: ctx.signal, origin, maxTotalMs: left, waitWhileAsked: true });
  } finally {
    ctx.signal.removeEventListener('abort', endQuestions);
    endQuestions();
  }
  // It has ended (tasks/result blocks until it does): no progress of it goes on, whatever tasks/get says.
  task.progressUntil?.abort();
  // How it ended (completed, failed, cancelled), for tasks/get and the book's expiry.
  const state = await connection.relayedTasks.get(task.upstreamTaskId, { timeoutMs: connection.config.timeouts.requestMs }).catch(() => undefined);
  if (state) relay.updated(task, state);
  relay.book.resultFetched(task);
  const schemas = knowsStructuredContent(ctx.session.protocolVersion) ? services.outputSchemas : undefined;
  if (schemas?.pending) await schemas.pending;
  const problems = toolResultProblems(result, schemas?.checkOf(task.upstream, task.originalName));
  checkedResult(services, task.upstream, 'tasks/result', `tool '${task.tool}'`, result, problems);
  // The result names the gateway's task, never the upstream's.
  return withRelatedTask(publicUrisInContent(services.catalog.current, task.upstream, result, servesResources(services, task.upstream)), task.id);
};

export const listTasks: MethodHandler = async (ctx, services) => {
  const relay = relayOf(services);
  const page = relay.book.list(callerKey(ctx.session.principal), ctx.params.cursor);
  const tasks = page.tasks.map((task) => relay.book.hostView(task));
  return page.nextCursor === undefined ? { tasks } : { tasks, nextCursor: page.nextCursor };
};

/** tasks/cancel: a task that has ended cannot be cancelled (-32602, as the spec has it). */
export const cancelTask: MethodHandler = async (ctx, services) => {
  const relay = relayOf(services);
  const task = known(ctx, relay);
  recordRoute(ctx.audit, task.upstream, task.originalName);
  ctx.audit.name = task.tool;
  if (isTerminal(task.status)) throw invalidParams(`Invalid params: the task has already ended (${task.status})`);
  const connection: UpstreamConnection = task.via;
  const state = await connection.relayedTasks.cancel(task.upstreamTaskId, { timeoutMs: connection.config.timeouts.requestMs, signal: ctx.signal });
  relay.updated(task, state);
  return { ...relay.book.hostView(task) };
};

function relayOf(services: RelayServices): TaskRelay {
  // The dispatcher lets no tasks/* through without one.
  if (!services.tasks) throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
  return services.tasks;
}

function known(ctx: RequestContext, relay: TaskRelay): RelayedTask<UpstreamConnection> {
  try {
    return relay.taskOf(ctx.session, ctx.params.taskId);
  } catch (err) {
    ctx.audit.deniedBy = 'task:unknown';
    throw err;
  }
}
