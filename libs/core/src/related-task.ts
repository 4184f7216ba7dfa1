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

/** A message related to the task `taskId` (in place of any task it named), the rest of its `_meta` kept. */
export function withRelatedTask(message: Item, taskId: string): Item {
  const meta = typeof message._meta === 'object' && message._meta !== null && !Array.isArray(message._meta) ? (message._meta as Item) : {};
  return { ...message, _meta: { ...meta, [RELATED_TASK_META]: { taskId } } };
}

/** The id of the task a message says it is related to; undefined when it names none, or not as a non-empty string. */
export function relatedTaskIdOf(message: Item): string | undefined {
  const meta = message._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const related = (meta as Item)[RELATED_TASK_META];
  const taskId = typeof related === 'object' && related !== null ? (related as Item).taskId : undefined;
  return typeof taskId === 'string' && taskId !== '' ? taskId : undefined;
}
