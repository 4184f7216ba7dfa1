import { Cancellation, ErrorCode, McpError, cancelledError, withoutRelatedTask, type CancelSignal, type PeerRequestOptions } from '@switchboard/core';

import { MAX_TASK_ID_CHARS, STOP_CANCEL_MS, TASKS_REVISION, cancelQuietly, isTerminalStatus, type SendTaskRequest } from './task-protocol.js';

type Item = Record<string, unknown>;

/** tasks/get is asked at the task's pollInterval, kept within these bounds (ms). */
export const MIN_POLL_MS = 250;
export const MAX_POLL_MS = 30_000;
const DEFAULT_POLL_MS = 1000;
/** The ttl asked for when the call has no hard maximum; else that maximum and this margin to fetch the result. */
const DEFAULT_TTL_MS = 600_000;
const TTL_MARGIN_MS = 60_000;

/** Whether an upstream runs tool calls as tasks: it negotiated 2025-11-25 and declared tasks.requests.tools.call. */
export function runsToolTasks(protocolVersion: string | undefined, capabilities: Item): boolean {
  if (protocolVersion !== TASKS_REVISION) return false;
  const requests = (capabilities.tasks as Item | undefined)?.requests as Item | undefined;
  const tools = requests?.tools as Item | undefined;
  return typeof tools?.call === 'object' && tools.call !== null;
}

interface CreatedTask {
  taskId: string;
  pollInterval?: number;
}

/**
 * Calls tools as tasks on one upstream connection, for hosts that never see the task (the
 * gateway declares no `tasks` capability): the tools/call goes with `task`, the answer is the
 * task, and the host's answer is the task's result, fetched with tasks/result (which blocks
 * until the task ends, delivering the upstream's questions about it on its way) while
 * tasks/get, at the task's pollInterval, checks that the upstream still answers within the
 * call's idle timeout. Whatever ends the call before the task ends (the host's cancel, the
 * host leaving, the timeout, the connection's stop) sends tasks/cancel, so no task runs on
 * upstream for a host that is no longer waiting for it.
 */
export class TaskCalls {
  /** The tasks being waited for: a stop cancels them before the connection closes. */
  private readonly running = new Set<string>();
  /** The tools of the upstream's last tools/list that can only be called as tasks. */
  private taskOnly: ReadonlySet<string> = new Set();
  /** Those that may be called as tasks or not. */
  private taskOptional: ReadonlySet<string> = new Set();

  constructor(
    private readonly upstream: string,
    private readonly send: SendTaskRequest,
    /** Whether the upstream runs tool calls as tasks now (runsToolTasks of what it negotiated). */
    private readonly runsTasks: () => boolean,
  ) {}

  /** Records the task-only and task-optional tools of a tools/list just read. */
  listed(taskOnly: readonly string[] = [], taskOptional: readonly string[] = []): void {
    this.taskOnly = new Set(taskOnly);
    this.taskOptional = new Set(taskOptional);
  }

  /**
   * The tool's `execution.taskSupport` in the upstream's last tools/list, when the upstream
   * runs tool calls as tasks now; undefined (a plain tool: "forbidden") otherwise.
   */
  taskSupportOf(tool: string): 'required' | 'optional' | undefined {
    if (!this.runsTasks()) return undefined;
    if (this.taskOnly.has(tool)) return 'required';
    return this.taskOptional.has(tool) ? 'optional' : undefined;
  }

  /** Whether its last tools/list had this tool callable only as a task (execution.taskSupport "required"). */
  isTaskOnly(tool: string): boolean {
    return this.taskOnly.has(tool);
  }

  /**
   * A tools/call run as a task, answered with the task's result; a plain tools/call when the
   * upstream runs no tasks now (it reconnected with another revision, say): it refuses it then.
   */
  async call(params: Item, options: PeerRequestOptions): Promise<Item> {
    if (!this.runsTasks()) return this.send('tools/call', params, options);
    const startedAt = Date.now();
    const { signal, maxTotalMs } = options;
    const ttl = maxTotalMs === undefined ? DEFAULT_TTL_MS : maxTotalMs + TTL_MARGIN_MS;
    // The task's progress comes under the tools/call's token until the task ends (the spec).
    const taskEnded = new Cancellation();
    try {
      // Not cancelled with the host's signal: abandoned before its answer, the call would
      // leave the task it creates anyway running with an id nobody knows. It is answered at
      // once with the task, which is then cancelled.
      const created = await this.send('tools/call', { ...params, task: { ttl } }, { ...options, signal: undefined, progressUntil: taskEnded });
      // An upstream that ran the call itself rather than as a task has answered already.
      if (!('task' in created)) return created;
      const task = this.taskOf(created);
      const left = maxTotalMs === undefined ? undefined : Math.max(1, maxTotalMs - (Date.now() - startedAt));
      return await this.follow(task, { ...options, maxTotalMs: left }, signal);
    } finally {
      taskEnded.abort();
    }
  }

  /**
   * At a stop, while the connection can still say so (a task runs on after it closes):
   * tasks/cancel for every task still waited for, each answered or given up within STOP_CANCEL_MS.
   */
  async cancelAll(): Promise<void> {
    await Promise.all([...this.running].map((taskId) => this.cancel(taskId, STOP_CANCEL_MS)));
  }

  private async follow(task: CreatedTask, options: PeerRequestOptions, signal: CancelSignal | undefined): Promise<Item> {
    const { taskId } = task;
    const timeoutMs = options.timeoutMs;
    this.running.add(taskId);
    const ended = new Cancellation();
    const hostGone = () => ended.abort();
    signal?.addEventListener('abort', hostGone, { once: true });
    // Whether tasks/result is what failed (rather than a poll): only then is the task's state worth asking.
    let resultFailed = false;
    try {
      if (signal?.aborted) throw cancelledError();
      // No idle timeout: it waits for the task, however long; the polls are what must be answered in time.
      const result = this.send('tasks/result', { taskId }, {
        signal: ended,
        origin: options.origin,
        maxTotalMs: options.maxTotalMs,
        waitWhileAsked: true,
      }).catch((err: unknown) => {
        resultFailed = !ended.aborted;
        throw err;
      });
      // The host never saw the task the result came from.
      return withoutRelatedTask(await Promise.race([result, this.poll(task, ended, timeoutMs)]));
    } catch (err) {
      throw await this.ending(taskId, err, resultFailed, timeoutMs);
    } finally {
      ended.abort();
      signal?.removeEventListener('abort', hostGone);
      this.running.delete(taskId);
    }
  }

  /**
   * The error a call that did not get its task's result ends with. A task that ended failed
   * or cancelled upstream is said so, with its status message; one still running is
   * cancelled (the host cancelled or left, the call timed out, the upstream stopped
   * answering), and the error is the one that ended the call.
   */
  private async ending(taskId: string, err: unknown, resultFailed: boolean, timeoutMs: number | undefined): Promise<unknown> {
    if (resultFailed) {
      const state = await this.send('tasks/get', { taskId }, { timeoutMs }).catch(() => undefined);
      const status = state?.status;
      if (typeof status === 'string' && isTerminalStatus(status)) {
        if (status === 'completed' || !(err instanceof McpError)) return err;
        const said = typeof state?.statusMessage === 'string' && state.statusMessage !== '' ? `: ${state.statusMessage.slice(0, 500)}` : '';
        const ended = status === 'failed' ? 'failed' : 'was cancelled';
        return new McpError(err.code, `Upstream '${this.upstream}' task ${ended}${said}`);
      }
    }
    void this.cancel(taskId, timeoutMs);
    return err;
  }

  /**
   * Asks tasks/get at the task's pollInterval until `ended`: rejects when the upstream does
   * not answer one within the idle timeout (or answers with an error), and with a
   * cancellation once `ended` aborts, so it never settles the race before the result does.
   */
  private async poll(task: CreatedTask, ended: CancelSignal, timeoutMs: number | undefined): Promise<never> {
    let interval = task.pollInterval;
    for (;;) {
      await pause(bounded(interval), ended);
      if (ended.aborted) throw cancelledError();
      const state = await this.send('tasks/get', { taskId: task.taskId }, { timeoutMs, signal: ended });
      if (typeof state.pollInterval === 'number') interval = state.pollInterval;
    }
  }

  private cancel(taskId: string, timeoutMs: number | undefined): Promise<void> {
    return cancelQuietly(this.send, taskId, timeoutMs);
  }

  private taskOf(created: Item): CreatedTask {
    const task = created.task as Item | undefined;
    const taskId = task?.taskId;
    if (typeof taskId !== 'string' || taskId === '' || taskId.length > MAX_TASK_ID_CHARS) {
      throw new McpError(ErrorCode.ConnectionClosed, `Upstream '${this.upstream}' answered a tools/call as a task without a usable taskId`);
    }
    const pollInterval = task!.pollInterval;
    return typeof pollInterval === 'number' ? { taskId, pollInterval } : { taskId };
  }
}

function bounded(pollInterval: number | undefined): number {
  if (pollInterval === undefined || !Number.isFinite(pollInterval)) return DEFAULT_POLL_MS;
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, pollInterval));
}

/** Waits `ms`, or less once `signal` aborts. */
function pause(ms: number, signal: CancelSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref?.();
    signal.addEventListener('abort', done, { once: true });
  });
}
