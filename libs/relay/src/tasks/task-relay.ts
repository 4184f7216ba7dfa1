import { Cancellation, callerKey, relatedTaskIdOf, withRelatedTask, withoutRelatedTask, type PeerRequestOptions } from '@switchboard/core';
import { TASKS_REVISION, type UpstreamConnection, type UpstreamTask } from '@switchboard/upstream';
import type { ForwardHow } from '../forwarder.js';
import type { DownstreamSession, SessionDirectory } from '../session.js';
import { DEFAULT_TASK_BOOK_LIMITS, TaskBook, type RelayedTask, type TaskBookLimits } from './task-book.js';

type Item = Record<string, unknown>;

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
  /** Per session: the progress of the tasks it created that still goes on to it (ended when it ends). */
  private readonly progressOf = new Map<DownstreamSession, Set<Cancellation>>();

  constructor(
    private readonly sessions: SessionDirectory,
    limits: TaskBookLimits = DEFAULT_TASK_BOOK_LIMITS,
  ) {
    this.book = new TaskBook<UpstreamConnection>(limits, Date.now, (task) => task.via.relayedTasks.forget(task.upstreamTaskId));
    // Its progress token was that session's own: nobody else could use it.
    sessions.onClose((session) => {
      const progress = this.progressOf.get(session);
      this.progressOf.delete(session);
      for (const until of [...(progress ?? [])]) until.abort();
    });
  }

  /** The gateway is shutting down: the book's sweep stops (TaskBook.close). */
  close(): void {
    this.book.close();
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
   *
   * A call that asked for progress goes on hearing it after that answer: the spec keeps the
   * call's progressToken valid "throughout the task's lifetime, even after the
   * CreateTaskResult has been returned", until "the task reaches a terminal status"
   * (2025-11-25, basic/utilities/progress). The upstream's progress under the token the
   * gateway gave it reaches this session under the host's own token (`options.onProgress`,
   * the forwarder's, rate limited as any call's) until the book sees the task end or forgets
   * it, or this session ends; never another session, even of the same principal (the token
   * is this session's own).
   */
  async create(
    session: DownstreamSession,
    connection: UpstreamConnection,
    tool: TaskTool,
    params: Item,
    options: PeerRequestOptions,
    onMade?: (task: RelayedTask<UpstreamConnection>) => void,
  ): Promise<RelayedTask<UpstreamConnection>> {
    this.watch(connection);
    const progressUntil = options.onProgress ? new Cancellation() : undefined;
    let task: RelayedTask<UpstreamConnection> | undefined;
    let refusal: unknown;
    // Booked as the upstream's answer is handled, not after the await: the progress and status
    // it sent right behind that answer (one chunk of a stdio pipe) are handled before the await
    // returns, and must find the task (its related-task id, its terminal status).
    const book = (created: UpstreamTask) => {
      try {
        task = this.book.add(this.fieldsOf(session, connection, tool, created, progressUntil));
        onMade?.(task);
      } catch (err) {
        refusal = err;
      }
    };
    let created: UpstreamTask;
    try {
      created = await connection.relayedTasks.create(params, progressUntil ? { ...options, progressUntil } : options, book);
    } catch (err) {
      progressUntil?.abort();
      throw err;
    }
    // RelayedTasks.create tells `book` of every task it returns, early or, failing that, after.
    if (!task) {
      progressUntil?.abort();
      void connection.relayedTasks.cancel(created.taskId, { timeoutMs: connection.config.timeouts.requestMs }).catch(() => undefined);
      throw refusal;
    }
    if (progressUntil) this.endsWithSession(session, progressUntil);
    return task;
  }

  private fieldsOf(session: DownstreamSession, connection: UpstreamConnection, tool: TaskTool, created: UpstreamTask, progressUntil?: Cancellation) {
    return {
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
      ...(progressUntil && { progressUntil }),
    };
  }

  /**
   * A host's task-augmented tools/call as Forwarder.forward sends it: `send` creates the task
   * (create) and answers with it as the host is shown it; `relate` has its progress name the
   * gateway's task (the spec has every notification related to a task carry its id in
   * `_meta["io.modelcontextprotocol/related-task"]`), never the upstream's, which progress
   * that comes before the task is made goes without.
   */
  creation(session: DownstreamSession, connection: UpstreamConnection, tool: TaskTool): Required<ForwardHow> {
    let made: RelayedTask<UpstreamConnection> | undefined;
    return {
      send: async (params, options) => {
        const task = await this.create(session, connection, tool, params, options, (booked) => (made = booked));
        return { task: this.book.hostView(task) };
      },
      relate: (progress) => (made ? withRelatedTask(progress, made.id) : withoutRelatedTask(progress)),
    };
  }

  /**
   * A message an upstream sent about one of its tasks on `connection` (a question asked while
   * the task is input_required), as `session` may get it: related to the gateway's id for that
   * task when it is one the gateway relays for the session's principal and the session speaks
   * tasks; otherwise without any related task, since the upstream's id is nothing a host
   * could use and names a task on a connection other principals may share (a task the gateway
   * runs for a host that never saw it, another principal's, one it does not know).
   */
  relatedFor(session: DownstreamSession, connection: UpstreamConnection, message: Item): Item {
    const upstreamTaskId = relatedTaskIdOf(message);
    const task = upstreamTaskId !== undefined && TaskRelay.enabledFor(session) ? this.book.ofUpstream(connection, upstreamTaskId) : undefined;
    return task && task.principal === callerKey(session.principal) ? withRelatedTask(message, task.id) : withoutRelatedTask(message);
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

  /** The task's progress to `session` ends with the session too (if it has already ended: now). */
  private endsWithSession(session: DownstreamSession, progressUntil: Cancellation): void {
    if (progressUntil.aborted) return;
    if (this.sessions.get(session.id) !== session) return progressUntil.abort();
    let progress = this.progressOf.get(session);
    if (!progress) this.progressOf.set(session, (progress = new Set()));
    progress.add(progressUntil);
    progressUntil.addEventListener('abort', () => {
      progress.delete(progressUntil);
      if (progress.size === 0 && this.progressOf.get(session) === progress) this.progressOf.delete(session);
    });
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
