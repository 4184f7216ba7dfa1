import { RELATED_TASK_META, callerKey, type PeerRequestOptions } from '@switchboard/core';
import { TASKS_REVISION, type UpstreamConnection, type UpstreamTask } from '@switchboard/upstream';
import type { DownstreamSession, SessionDirectory } from '../session.js';
import { DEFAULT_TASK_BOOK_LIMITS, TaskBook, type RelayedTask, type TaskBookLimits } from './task-book.js';

type Item = Record<string, unknown>;

/** The revision whose `tasks` the gateway relays (later ones moved tasks to an extension). */

/** What the gateway declares to a host it relays tasks for: list, cancel and task-augmented tools/call. */
export const RELAYED_TASKS_CAPABILITY: Item = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** What the relay knows of the tool a task-augmented call is for, and of the call. */
export interface TaskTool {
  server: string;
  tool: string;
  originalName: string;
  /** The trace id of the call's audit row, which the task keeps (RelayedTask.traceId). */
  traceId?: string;
}

/**
 * Tasks relayed between hosts that speak them and upstreams that run tool calls as tasks
 * (ADR 012): the task book, the upstreams' status notifications passed on to the task's
 * principal under the gateway's id, and the tasks of a connection that is gone failed.
 */
export class TaskRelay {
  readonly book: TaskBook<UpstreamConnection>;
  private readonly watched = new WeakSet<UpstreamConnection>();

  constructor(
    private readonly sessions: SessionDirectory,
    limits: TaskBookLimits = DEFAULT_TASK_BOOK_LIMITS,
  ) {
    this.book = new TaskBook<UpstreamConnection>(limits, Date.now, (task) => task.via.relayedTasks.forget(task.upstreamTaskId));
  }

  /**
   * Whether the gateway relays tasks for this session: it negotiated 2025-11-25 and declared
   * a `tasks` capability, the one sign a host gives that it knows tasks (ADR 012). Others
   * get task-only tools as plain tools and have `task` left out of their requests (ADR 010).
   */
  static enabledFor(session: DownstreamSession): boolean {
    const tasks = session.clientCapabilities?.tasks;
    return session.protocolVersion === TASKS_REVISION && typeof tasks === 'object' && tasks !== null && !Array.isArray(tasks);
  }

  /**
   * Sends a task-augmented tools/call (its params carry `task`) and records the task the
   * upstream created under a new gateway id, bound to the session's principal; the host's
   * answer is the task as the gateway shows it. A task the book has no room for is cancelled
   * upstream, and the host gets the book's refusal.
   */
  async create(session: DownstreamSession, connection: UpstreamConnection, tool: TaskTool, params: Item, options: PeerRequestOptions): Promise<Item> {
    this.watch(connection);
    const created = await connection.relayedTasks.create(params, options);
    let task: RelayedTask<UpstreamConnection>;
    try {
      task = this.book.add({
        principal: callerKey(session.principal),
        upstream: tool.server,
        via: connection,
        upstreamTaskId: created.taskId,
        tool: tool.tool,
        originalName: tool.originalName,
        status: created.status,
        ttlMs: created.ttl,
        ...(created.pollInterval !== undefined && { pollInterval: created.pollInterval }),
        ...(created.statusMessage !== undefined && { statusMessage: created.statusMessage }),
        ...(tool.traceId !== undefined && { traceId: tool.traceId }),
      });
    } catch (err) {
      void connection.relayedTasks.cancel(created.taskId, { timeoutMs: connection.config.timeouts.requestMs }).catch(() => undefined);
      throw err;
    }
    return { task: this.book.hostView(task) };
  }

  /** The principal's task with this id, or the unknown-task error. */
  taskOf(session: DownstreamSession, taskId: unknown): RelayedTask<UpstreamConnection> {
    return this.book.get(callerKey(session.principal), taskId);
  }

  /** What the upstream said of a task (tasks/get, tasks/cancel); a change is told to its principal. */
  updated(task: RelayedTask<UpstreamConnection>, state: UpstreamTask): void {
    const before = task.status;
    this.book.update(task, state);
    if (task.status !== before) this.tell(task);
  }

  /** A result's `_meta` names the gateway's task, never the upstream's. */
  static withRelatedTask(result: Item, taskId: string): Item {
    const meta = typeof result._meta === 'object' && result._meta !== null ? (result._meta as Item) : {};
    return { ...result, _meta: { ...meta, [RELATED_TASK_META]: { taskId } } };
  }

  private watch(connection: UpstreamConnection): void {
    if (this.watched.has(connection)) return;
    this.watched.add(connection);
    connection.relayedTasks.onStatus((state) => {
      const task = this.book.ofUpstream(connection, state.taskId);
      if (task) this.updated(task, state);
    });
    connection.relayedTasks.onGone((why) => {
      for (const task of this.book.connectionGone(connection, why)) this.tell(task);
    });
  }

  /**
   * notifications/tasks/status to the sessions of the task's principal that the gateway
   * relays tasks for; none left: dropped (the task stays to be polled).
   */
  private tell(task: RelayedTask<UpstreamConnection>): void {
    const params = this.book.hostView(task);
    for (const session of this.sessions.initialized()) {
      if (!TaskRelay.enabledFor(session) || callerKey(session.principal) !== task.principal) continue;
      void session.send({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: { ...params } }).catch(() => undefined);
    }
  }
}
