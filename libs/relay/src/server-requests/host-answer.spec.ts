import { describe, expect, it } from 'vitest';
import { checkHostAnswer } from './host-answer.js';

const form = {
  message: 'Who are you?',
  requestedSchema: {
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer', maximum: 150 } },
    required: ['name'],
  },
};
const url = { mode: 'url', message: 'Sign in', url: 'https://x.test/', elicitationId: 'e1' };
const problemsOf = (method: string, params: Record<string, unknown>, answer: Record<string, unknown>) => {
  const checked = checkHostAnswer(method, params, answer);
  return 'problems' in checked ? checked.problems : [];
};

describe('checkHostAnswer: elicitation', () => {
  it('passes accept with content the schema allows, and decline and cancel', () => {
    expect(checkHostAnswer('elicitation/create', form, { action: 'accept', content: { name: 'Dana', age: 40 } })).toEqual({
      result: { action: 'accept', content: { name: 'Dana', age: 40 } },
    });
    expect(checkHostAnswer('elicitation/create', url, { action: 'accept' })).toEqual({ result: { action: 'accept' } });
    expect(checkHostAnswer('elicitation/create', form, { action: 'cancel', _meta: { x: 1 } })).toEqual({ result: { action: 'cancel', _meta: { x: 1 } } });
  });

  it('keeps what was typed into a declined form, and unknown keys, from the upstream', () => {
    expect(checkHostAnswer('elicitation/create', form, { action: 'decline', content: { name: 'Dana' }, extra: 1 })).toEqual({ result: { action: 'decline' } });
  });

  it.each([
    ['an unknown action', { action: 'bogus' }, ['action must be one of accept, decline, cancel']],
    ['no action at all', { foo: 1 }, ['action must be one of accept, decline, cancel']],
    ['content of the wrong type', { action: 'accept', content: { name: 5 } }, ['content: name must be text']],
    ['a value over the maximum', { action: 'accept', content: { name: 'Dana', age: 200 } }, ['content: age must be at most 150']],
    ['extra and nested fields', { action: 'accept', content: { name: { first: 'Dana' }, admin: { yes: true } } }, ['content: admin is not a field of this form', 'content: name must be text']],
    ['a missing required field', { action: 'accept', content: {} }, ['content: name is required']],
    ['content that is not an object', { action: 'accept', content: 'Dana' }, ['content: content must be an object']],
  ])('refuses %s for a form', (_label, answer, problems) => {
    expect(problemsOf('elicitation/create', form, answer)).toEqual(problems);
  });

  it('refuses content for a url-mode elicitation', () => {
    expect(problemsOf('elicitation/create', url, { action: 'accept', content: { token: 'x' } })).toEqual(['a url-mode elicitation is accepted without content']);
  });
});

describe('checkHostAnswer: sampling and roots', () => {
  const withTools = { tools: [{ name: 'n', inputSchema: { type: 'object' } }] };

  it('passes a CreateMessageResult, with one content block or, when the request offered tools, a list', () => {
    const result = { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm', stopReason: 'endTurn' };
    expect(checkHostAnswer('sampling/createMessage', {}, result)).toEqual({ result });
    const list = { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }, { type: 'text', text: 'x' }], model: 'm' };
    expect(checkHostAnswer('sampling/createMessage', withTools, list)).toEqual({ result: list });
  });

  it('gives a request that offered no tools one block: a list of one becomes the block, more or tool blocks are refused', () => {
    const text = { type: 'text', text: 'hi' };
    const one = { role: 'assistant', content: [text], model: 'm' };
    expect(checkHostAnswer('sampling/createMessage', {}, one)).toEqual({ result: { ...one, content: text } });
    expect(problemsOf('sampling/createMessage', {}, { role: 'assistant', content: [text, text], model: 'm' })).toEqual([
      'content must be one block when the request offered no tools (it has 2)',
    ]);
    expect(problemsOf('sampling/createMessage', { tools: [] }, { role: 'assistant', content: { type: 'tool_use', id: 't', name: 'n', input: {} }, model: 'm' })).toEqual([
      'content may not hold tool_use blocks when the request offered no tools',
    ]);
  });

  it('refuses blocks of no sampling kind, tools or not', () => {
    const link = { type: 'resource_link', uri: 'file:///x', name: 'x' };
    for (const params of [{}, withTools]) {
      expect(problemsOf('sampling/createMessage', params, { role: 'assistant', content: link, model: 'm' })).toEqual([
        'content may not hold resource_link blocks (a sampled message holds text, image, audio, tool_use or tool_result)',
      ]);
    }
  });

  it('refuses a sampling answer that is not a CreateMessageResult', () => {
    expect(problemsOf('sampling/createMessage', {}, { foo: 1 })).toEqual([
      'role must be user or assistant',
      'content must be a content block (with a type) or a non-empty list of them',
      'model must be a string',
    ]);
    expect(problemsOf('sampling/createMessage', {}, { role: 'assistant', content: [], model: 'm', stopReason: 3 })).toEqual([
      'content must be a content block (with a type) or a non-empty list of them',
      'stopReason must be a string',
    ]);
  });

  it('passes file roots, and refuses roots that are not file:// URIs or not roots at all', () => {
    const roots = { roots: [{ uri: 'file:///home/me/project', name: 'project' }, { uri: 'file:///srv' }] };
    expect(checkHostAnswer('roots/list', {}, roots)).toEqual({ result: roots });
    expect(problemsOf('roots/list', {}, { roots: [{ uri: 'http://not-file' }, 5, { uri: 'file:///x', name: 7 }] })).toEqual([
      'roots[0].uri must be a file:// URI',
      'roots[1] must be an object with a uri',
      'roots[2].name must be a string',
    ]);
    expect(problemsOf('roots/list', {}, { foo: 1 })).toEqual(['roots must be a list']);
  });
});
