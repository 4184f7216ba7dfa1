import { describe, expect, it } from 'vitest';
import { servedItem, unservableReason } from './list-items.js';

const tool = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ name: 't', inputSchema: { type: 'object' }, ...extra });

describe('tools that need tasks (2025-11-25), which the gateway does not relay', () => {
  it('a tool that can only be called as a task is left out, with the reason', () => {
    expect(unservableReason('tools', tool({ execution: { taskSupport: 'required' } }))).toMatch(/only be called as a task/);
  });

  it('tools whose task support is optional, forbidden or unsaid are served', () => {
    for (const execution of [{ taskSupport: 'optional' }, { taskSupport: 'forbidden' }, {}, undefined]) {
      expect(unservableReason('tools', tool(execution === undefined ? {} : { execution }))).toBeUndefined();
    }
  });

  it('a served tool carries no execution; without one it is the same object', () => {
    const withExecution = tool({ execution: { taskSupport: 'optional' }, title: 'T' });
    expect(servedItem('tools', withExecution)).toEqual({ name: 't', inputSchema: { type: 'object' }, title: 'T' });
    expect(withExecution.execution).toEqual({ taskSupport: 'optional' });
    const plain = tool();
    expect(servedItem('tools', plain)).toBe(plain);
    const prompt = { name: 'p', execution: 'not a tool field' };
    expect(servedItem('prompts', prompt)).toBe(prompt);
  });
});
