/** The `_meta` key (2025-11-25 tasks) that ties a message to a task: `{ taskId }`. */
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

type Item = Record<string, unknown>;

/**
 * A result or a request's params without the task it is related to, for a host that never
 * saw that task: the gateway runs task-only tools as tasks upstream for hosts that get plain
 * answers, so an upstream's task id is nothing a host could use. The same object when there
 * is none.
 */
export function withoutRelatedTask(message: Item): Item {
  const meta = message._meta;
  if (typeof meta !== 'object' || meta === null || !(RELATED_TASK_META in meta)) return message;
  const { [RELATED_TASK_META]: _task, ...rest } = meta as Item;
  const { _meta: _all, ...plain } = message;
  return Object.keys(rest).length > 0 ? { ...plain, _meta: rest } : plain;
}
