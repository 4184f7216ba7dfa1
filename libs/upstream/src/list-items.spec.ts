import { MAX_JSON_DEPTH, MAX_URI_CHARS } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { servedItem, taskOnly, unservableReason } from './list-items.js';
import { runsToolTasks } from './task-calls.js';

const tool = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ name: 't', inputSchema: { type: 'object' }, ...extra });

describe('tools that need tasks (2025-11-25), which the gateway runs as tasks for hosts that never see them', () => {
  it('a tool that can only be called as a task is left out, with the reason, unless its upstream runs tool calls as tasks', () => {
    const taskOnlyTool = tool({ execution: { taskSupport: 'required' } });
    expect(unservableReason('tools', taskOnlyTool)).toMatch(/only be called as a task.*does not run tool calls as tasks/);
    expect(unservableReason('tools', taskOnlyTool, true)).toBeUndefined();
    expect(taskOnly(taskOnlyTool)).toBe(true);
    expect(taskOnly(tool({ execution: { taskSupport: 'optional' } }))).toBe(false);
  });

  it('an upstream runs tool calls as tasks when it negotiated 2025-11-25 and declared tasks.requests.tools.call', () => {
    const tasks = { tasks: { requests: { tools: { call: {} } } } };
    expect(runsToolTasks('2025-11-25', tasks)).toBe(true);
    expect(runsToolTasks('2025-06-18', tasks)).toBe(false);
    expect(runsToolTasks(undefined, tasks)).toBe(false);
    expect(runsToolTasks('2025-11-25', { tasks: { list: {}, cancel: {} } })).toBe(false);
    expect(runsToolTasks('2025-11-25', { tasks: { requests: { tools: { call: true } } } })).toBe(false);
    expect(runsToolTasks('2025-11-25', {})).toBe(false);
  });

  it('tools whose task support is optional, forbidden or unsaid are served', () => {
    for (const execution of [{ taskSupport: 'optional' }, { taskSupport: 'forbidden' }, {}, undefined]) {
      expect(unservableReason('tools', tool(execution === undefined ? {} : { execution }))).toBeUndefined();
    }
  });

  it('a served tool carries no execution, a task-only one neither; without one it is the same object', () => {
    const withExecution = tool({ execution: { taskSupport: 'optional' }, title: 'T' });
    expect(servedItem('tools', withExecution)).toEqual({ name: 't', inputSchema: { type: 'object' }, title: 'T' });
    expect(servedItem('tools', tool({ execution: { taskSupport: 'required' } }))).toEqual({ name: 't', inputSchema: { type: 'object' } });
    expect(withExecution.execution).toEqual({ taskSupport: 'optional' });
    const plain = tool();
    expect(servedItem('tools', plain)).toBe(plain);
    const prompt = { name: 'p', execution: 'not a tool field' };
    expect(servedItem('prompts', prompt)).toBe(prompt);
  });
});

describe('items nested deeper than any walk on the way can follow', () => {
  it(`an item of any list nested deeper than ${MAX_JSON_DEPTH} levels is left out, with the reason; one that is not, served`, () => {
    const nest = (levels: number): unknown => {
      let value: unknown = {};
      for (let i = 0; i < levels; i++) value = [value];
      return value;
    };
    const deep = { type: 'object', properties: { a: nest(100_000) } };
    expect(unservableReason('tools', tool({ inputSchema: deep }))).toBe(`it nests deeper than ${MAX_JSON_DEPTH} levels`);
    expect(unservableReason('resources', { uri: 'x:/a', name: 'a', _meta: { x: nest(MAX_JSON_DEPTH + 1) } })).toMatch(/nests deeper/);
    expect(unservableReason('tools', tool({ inputSchema: { type: 'object', properties: { a: nest(200) } } }))).toBeUndefined();
  });
});

describe('resources and templates whose URI no host could send', () => {
  it(`a resource or template whose URI is longer than ${MAX_URI_CHARS} characters is left out, with the reason; one at the limit is served`, () => {
    const uri = (length: number) => `x:/${'a'.repeat(length - 3)}`;
    expect(unservableReason('resources', { uri: uri(MAX_URI_CHARS + 1), name: 'a' })).toBe(
      `its uri is ${MAX_URI_CHARS + 1} characters, and a host may send at most ${MAX_URI_CHARS}`,
    );
    expect(unservableReason('resourceTemplates', { uriTemplate: `${uri(MAX_URI_CHARS)}{id}`, name: 't' })).toMatch(/^its uriTemplate is /);
    expect(unservableReason('resources', { uri: uri(MAX_URI_CHARS), name: 'a' })).toBeUndefined();
    expect(unservableReason('resourceTemplates', { uriTemplate: uri(MAX_URI_CHARS), name: 't' })).toBeUndefined();
  });
});
