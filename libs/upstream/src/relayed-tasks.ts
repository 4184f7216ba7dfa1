import { ErrorCode, McpError, type PeerRequestOptions } from '@switchboard/core';

import { MAX_TASK_ID_CHARS, STOP_CANCEL_MS, cancelQuietly, isTerminalStatus, type SendTaskRequest, type UpstreamTaskStatus } from './task-protocol.js';

type Item = Record<string, unknown>;

const STATUSES: ReadonlySet<string> = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);
const MAX_STATUS_MESSAGE_CHARS = 1000;

/** An upstream's task as the gateway keeps it: checked, and cut to what a host may be shown. */
export interface UpstreamTask {
  taskId: string;
  status: UpstreamTaskStatus;
  /** null: the upstream keeps it for ever. */
  ttl: number | null;
  pollInterval?: number;
  statusMessage?: string;
}

/**
 * The upstream side of the tasks the gateway relays to hosts that speak tasks (ADR 012): a
 * task-augmented tools/call, tasks/get, tasks/result and tasks/cancel on this connection,
 * each answer checked (an upstream's task id or status the gateway would pass on is never
 * taken on trust), and the upstream's notifications/tasks/status handed to whoever listens.
 * Tasks not known to have ended are cancelled at the connection's stop, and when the gateway
 * forgets them: their ids die with the gateway's mapping, so nobody could fetch their results. When the connection is lost,
 * listeners hear so: a stdio child's tasks end with it.
 */
export class RelayedTasks {
  private readonly open = new Set<string>();
  private readonly statusListeners = new Set<(task: UpstreamTask) => void>();
  private readonly goneListeners = new Set<(why: string) => void>();

  constructor(
    private readonly upstream: string,
    private readonly send: SendTaskRequest,
  ) {}

  /**
   * A tools/call with `task` (params carry it): answered at once with the task the upstream
   * created. `onCreated` is told of it as its answer is handled, before any message the
   * upstream sent after it (its progress, its status): those must find the task known.
   */
  async create(params: Item, options: PeerRequestOptions, onCreated?: (task: UpstreamTask) => void): Promise<UpstreamTask> {
    let task: UpstreamTask | undefined;
    // An invalid task throws here, and the peer fails the request with it.
    const onAnswer = (created: Item) => {
      if (!('task' in created)) return;
      task = this.checked(created.task);
      if (!isTerminalStatus(task.status)) this.open.add(task.taskId);
      onCreated?.(task);
    };
    const created = await this.send('tools/call', params, { ...options, onAnswer });
    // A send that does not hand the answer over early (onAnswer is the peer's option): the
    // task is taken the same way, so a stop still cancels it.
    if (!task) onAnswer(created);
    if (!task) throw new McpError(ErrorCode.ConnectionClosed, `Upstream '${this.upstream}' answered a task-augmented tools/call without a task`);
    return task;
  }

  async get(taskId: string, options: PeerRequestOptions): Promise<UpstreamTask> {
    return this.seen(this.checked(await this.send('tasks/get', { taskId }, options)));
  }

  /** tasks/result: blocks upstream until the task ends; its questions ride `options.origin`. */
  async result(taskId: string, options: PeerRequestOptions): Promise<Item> {
    const result = await this.send('tasks/result', { taskId }, options);
    this.open.delete(taskId);
    return result;
  }

  async cancel(taskId: string, options: PeerRequestOptions): Promise<UpstreamTask> {
    return this.seen(this.checked(await this.send('tasks/cancel', { taskId }, options)));
  }

  /**
   * The gateway forgot the task (its ttl and margin passed, nobody fetched it). One not known
   * to have ended is cancelled now, as at a stop: its id died with the gateway's mapping, so
   * its result can never be fetched, and an upstream that keeps running tasks past their ttl
   * would go on working for nobody. Nobody waits for the answer; the bound is a stop's.
   */
  forget(taskId: string): void {
    if (this.open.delete(taskId)) void cancelQuietly(this.send, taskId, STOP_CANCEL_MS);
  }

  /** A notifications/tasks/status from the upstream; one that is not a valid task is ignored. */
  statusNotified(params: unknown): void {
    let task: UpstreamTask;
    try {
      task = this.seen(this.checked(params));
    } catch {
      return;
    }
    for (const listener of this.statusListeners) listener(task);
  }

  onStatus(listener: (task: UpstreamTask) => void): void {
    this.statusListeners.add(listener);
  }

  onGone(listener: (why: string) => void): void {
    this.goneListeners.add(listener);
  }

  /** The connection was lost or stopped: the tasks on it are beyond reach. */
  gone(why: string): void {
    this.open.clear();
    for (const listener of this.goneListeners) listener(why);
  }

  /** At a stop, while the connection can still say so: tasks/cancel for every relayed task still running. */
  async cancelAll(): Promise<void> {
    const cancels = [...this.open].map((taskId) => cancelQuietly(this.send, taskId, STOP_CANCEL_MS));
    this.open.clear();
    await Promise.all(cancels);
  }

  private seen(task: UpstreamTask): UpstreamTask {
    if (isTerminalStatus(task.status)) this.open.delete(task.taskId);
    return task;
  }

  private checked(value: unknown): UpstreamTask {
    const task = (typeof value === 'object' && value !== null ? value : {}) as Item;
    const { taskId, status, ttl, pollInterval, statusMessage } = task;
    const valid =
      typeof taskId === 'string' &&
      taskId !== '' &&
      taskId.length <= MAX_TASK_ID_CHARS &&
      typeof status === 'string' &&
      STATUSES.has(status) &&
      (ttl === null || ttl === undefined || (typeof ttl === 'number' && Number.isFinite(ttl) && ttl >= 0)) &&
      (pollInterval === undefined || (typeof pollInterval === 'number' && Number.isFinite(pollInterval) && pollInterval >= 0)) &&
      (statusMessage === undefined || typeof statusMessage === 'string');
    if (!valid) throw new McpError(ErrorCode.ConnectionClosed, `Upstream '${this.upstream}' sent an invalid task`);
    return {
      taskId,
      status: status as UpstreamTaskStatus,
      ttl: typeof ttl === 'number' ? ttl : null,
      ...(pollInterval !== undefined && { pollInterval: pollInterval as number }),
      ...(statusMessage !== undefined && { statusMessage: (statusMessage as string).slice(0, MAX_STATUS_MESSAGE_CHARS) }),
    };
  }
}
