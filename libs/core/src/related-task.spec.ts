import { describe, expect, it } from 'vitest';
import { RELATED_TASK_META, withoutRelatedTask } from './related-task.js';

describe('withoutRelatedTask', () => {
  it('leaves out the related task, keeps the rest of _meta, and drops a _meta left empty', () => {
    const task = { taskId: 't-1' };
    expect(withoutRelatedTask({ content: [], _meta: { [RELATED_TASK_META]: task } })).toEqual({ content: [] });
    expect(withoutRelatedTask({ message: 'm', _meta: { [RELATED_TASK_META]: task, trace: 'x' } })).toEqual({ message: 'm', _meta: { trace: 'x' } });
  });

  it('gives back the same object when there is no related task', () => {
    for (const message of [{ content: [] }, { content: [], _meta: { trace: 'x' } }, { _meta: null }]) {
      expect(withoutRelatedTask(message)).toBe(message);
    }
  });
});
