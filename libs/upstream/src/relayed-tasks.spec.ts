import type { PeerRequestOptions } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { RelayedTasks, type UpstreamTask } from './relayed-tasks.js';

type Item = Record<string, unknown>;

/** An upstream that creates task `t1` and records what it is sent; `early` says whether it hands the answer to onAnswer. */
function upstream(early: boolean) {
  const sent: string[] = [];
  const send = async (method: string, params: Item, options: PeerRequestOptions): Promise<Item> => {
    sent.push(`${method} ${String(params.taskId ?? '')}`.trim());
    if (method !== 'tools/call') return { taskId: params.taskId, status: 'cancelled', ttl: null };
    const answer = { task: { taskId: 't1', status: 'working', ttl: 60_000 } };
    if (early) options.onAnswer?.(answer);
    return answer;
  };
  return { sent, tasks: new RelayedTasks('up', send) };
}

describe('RelayedTasks.create', () => {
  it.each([true, false])('takes the created task whether or not the send hands the answer over early (early: %s): a stop cancels it', async (early) => {
    const { sent, tasks } = upstream(early);
    const told: UpstreamTask[] = [];
    const task = await tasks.create({ name: 'x', task: {} }, {}, (t) => told.push(t));
    expect(task).toMatchObject({ taskId: 't1', status: 'working' });
    expect(told.map((t) => t.taskId)).toEqual(['t1']);
    await tasks.cancelAll();
    expect(sent).toEqual(['tools/call', 'tasks/cancel t1']);
  });

  it('refuses an answer without a valid task', async () => {
    const tasks = new RelayedTasks('up', async () => ({ task: { taskId: '', status: 'working' } }));
    await expect(tasks.create({}, {})).rejects.toThrow("Upstream 'up' sent an invalid task");
    const none = new RelayedTasks('up', async () => ({ content: [] }));
    await expect(none.create({}, {})).rejects.toThrow('without a task');
  });
});

describe('RelayedTasks.forget', () => {
  it('cancels upstream a task the gateway forgot while it had not ended: nobody can fetch its result any more', async () => {
    const { sent, tasks } = upstream(true);
    await tasks.create({ name: 'x', task: {} }, {});
    tasks.forget('t1');
    await expect.poll(() => sent).toEqual(['tools/call', 'tasks/cancel t1']);
    // Once only: a stop after it has nothing left to cancel.
    await tasks.cancelAll();
    expect(sent).toEqual(['tools/call', 'tasks/cancel t1']);
  });

  it('sends nothing for a task known to have ended', async () => {
    const { sent, tasks } = upstream(true);
    await tasks.create({ name: 'x', task: {} }, {});
    // The fixture answers every tasks/* request with the task cancelled: a terminal status.
    await tasks.get('t1', {});
    tasks.forget('t1');
    await tasks.cancelAll();
    expect(sent).toEqual(['tools/call', 'tasks/get t1']);
  });
});

