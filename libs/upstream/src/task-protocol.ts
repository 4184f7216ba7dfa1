import type { PeerRequestOptions } from '@switchboard/core';

type Item = Record<string, unknown>;
export type SendTaskRequest = (method: string, params: Item, options: PeerRequestOptions) => Promise<Item>;

/**
 * What the gateway's two uses of an upstream's tasks share (task-calls.ts: tasks run for hosts
 * that never see them; relayed-tasks.ts: tasks relayed to hosts that speak them).
 */

/** The revision that defines tasks (experimental); later ones moved them to an extension. */
export const TASKS_REVISION = '2025-11-25';

export type UpstreamTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/** Whether a task in this status has ended: completed, failed or cancelled. */
export function isTerminalStatus(status: string): boolean {
  return TERMINAL.has(status);
}

/** The longest task id taken from an upstream. */
export const MAX_TASK_ID_CHARS = 1024;

/** How long a stop waits for an upstream to answer the tasks/cancel of the tasks still running. */
export const STOP_CANCEL_MS = 2000;

/** tasks/cancel, answered or not: the caller has nothing to do with a failure but go on. */
export function cancelQuietly(send: SendTaskRequest, taskId: string, timeoutMs: number | undefined): Promise<void> {
  return send('tasks/cancel', { taskId }, { timeoutMs }).then(
    () => undefined,
    () => undefined,
  );
}
