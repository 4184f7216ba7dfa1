import { describe, expect, it } from 'vitest';
import { shapeHostAnswer } from './shape-host-answer.js';
import { Unanswerable } from './shape-server-request.js';

const text = { type: 'text', text: 'hi', annotations: { audience: ['user'], lastModified: '2025-01-01T00:00:00Z' } };
const audio = { type: 'audio', data: 'AA==', mimeType: 'audio/wav' };
const answer = (content: unknown) => ({ role: 'assistant', content, model: 'm', stopReason: 'endTurn' });

describe('shapeHostAnswer', () => {
  it('gives a 2025-11-25 upstream, or one not yet connected, the same object', () => {
    const list = answer([text, text]);
    expect(shapeHostAnswer('sampling/createMessage', list, '2025-11-25')).toBe(list);
    expect(shapeHostAnswer('sampling/createMessage', list, undefined)).toBe(list);
  });

  it('leaves elicitation and roots answers alone', () => {
    const roots = { roots: [{ uri: 'file:///a', _meta: { x: 1 } }] };
    expect(shapeHostAnswer('roots/list', roots, '2024-11-05')).toBe(roots);
  });

  it('makes a list of one block that block, with the annotations of the revision', () => {
    expect(shapeHostAnswer('sampling/createMessage', answer([text]), '2025-06-18')).toEqual(answer(text));
    expect(shapeHostAnswer('sampling/createMessage', answer([text]), '2025-03-26')).toEqual(answer({ ...text, annotations: { audience: ['user'] } }));
    const single = answer(audio);
    expect(shapeHostAnswer('sampling/createMessage', single, '2025-03-26')).toBe(single);
  });

  it.each([
    [[text, text], '2025-06-18', 'a sampling result of 2 content blocks'],
    [audio, '2024-11-05', 'audio content in a sampling result'],
    [[{ type: 'tool_use', id: 't', name: 'n', input: {} }], '2025-06-18', 'tool_use content in a sampling result'],
    [{ type: 'resource_link', uri: 'file:///a', name: 'a' }, '2025-06-18', 'resource_link content in a sampling result'],
  ])('cannot give %j to a %s upstream', (content, version, lacking) => {
    expect(shapeHostAnswer('sampling/createMessage', answer(content), version)).toEqual(new Unanswerable(lacking));
  });
});
