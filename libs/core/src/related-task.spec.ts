import { describe, expect, it } from 'vitest';
import { RELATED_TASK_META, relatedTaskIdOf, withRelatedTask, withoutRelatedTask } from './related-task.js';

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

describe('withRelatedTask', () => {
  it('relates a message to the task given, in place of any it named, keeping the rest of _meta', () => {
    expect(withRelatedTask({ message: 'm' }, 'gw')).toEqual({ message: 'm', _meta: { [RELATED_TASK_META]: { taskId: 'gw' } } });
    expect(withRelatedTask({ message: 'm', _meta: { [RELATED_TASK_META]: { taskId: 'up' }, trace: 'x' } }, 'gw')).toEqual({
      message: 'm',
      _meta: { [RELATED_TASK_META]: { taskId: 'gw' }, trace: 'x' },
    });
    expect(withRelatedTask({ _meta: ['odd'] }, 'gw')).toEqual({ _meta: { [RELATED_TASK_META]: { taskId: 'gw' } } });
  });
});

describe('relatedTaskIdOf', () => {
  it('reads the task id a message names, and nothing from a malformed one', () => {
    expect(relatedTaskIdOf({ _meta: { [RELATED_TASK_META]: { taskId: 'up-1' } } })).toBe('up-1');
    for (const meta of [undefined, null, 'x', {}, { [RELATED_TASK_META]: 'up-1' }, { [RELATED_TASK_META]: { taskId: 7 } }, { [RELATED_TASK_META]: { taskId: '' } }]) {
      expect(relatedTaskIdOf({ _meta: meta })).toBeUndefined();
    }
  });
});
