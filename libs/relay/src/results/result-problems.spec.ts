import { describe, expect, it } from 'vitest';
import { completionResultProblems, promptResultProblems, readResultProblems, toolResultProblems, type OutputCheck } from './result-problems.js';

const text = { type: 'text', text: 'hi' };
/** Stands in for a compiled outputSchema: { n: number } required. */
const needsNumberN: OutputCheck = (value) => (typeof (value as { n?: unknown }).n === 'number' ? undefined : 'data/n must be number');

describe('toolResultProblems', () => {
  it('passes every well-formed result, with unknown fields, _meta and every content type, a type it does not know included', () => {
    const blocks = [
      text,
      { type: 'image', data: 'aGk=', mimeType: 'image/png', annotations: { audience: ['user'] } },
      { type: 'audio', data: 'aGk=', mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'file:///a', name: 'a', mimeType: 'text/plain' },
      { type: 'resource', resource: { uri: 'file:///b', text: 'b' } },
      { type: 'resource', resource: { uri: 'file:///c', blob: 'Yw==' } },
      { type: 'hologram', frames: 3 },
    ];
    expect(toolResultProblems({ content: blocks, _meta: { 'x.example/trace': 1 }, vendorField: [1] })).toBeUndefined();
    expect(toolResultProblems({ content: [], isError: true })).toBeUndefined();
    expect(toolResultProblems({ content: [text], structuredContent: { n: 1 } }, needsNumberN)).toBeUndefined();
  });

  it.each([
    [{}, 'content is missing'],
    [{ content: 'hi' }, 'content is not an array'],
    [{ content: ['hi'] }, 'content[0] is not an object'],
    [{ content: [text, { text: 'no type' }] }, 'content[1] has no string type'],
    [{ content: [{ type: 7 }] }, 'content[0] has no string type'],
    [{ content: [{ type: 'text' }] }, 'content[0] is a text block without a string text'],
    [{ content: [{ type: 'image', data: 'x' }] }, 'content[0] is an image block without string data and mimeType'],
    [{ content: [{ type: 'resource_link', uri: 'file:///a' }] }, 'content[0] is a resource_link without a string uri and name'],
    [{ content: [{ type: 'resource', resource: { uri: 'file:///a' } }] }, 'content[0] is an embedded resource whose resource has neither a string text nor a string blob'],
    [{ content: [], isError: 'yes' }, 'isError is not a boolean'],
    [{ content: [], structuredContent: [1, 2] }, 'structuredContent is not an object'],
    [{ content: [], structuredContent: null }, 'structuredContent is not an object'],
    [{ content: [], _meta: 'x' }, '_meta is not an object'],
  ])('names what is wrong with %j', (result, problem) => {
    expect(toolResultProblems(result)).toEqual([problem]);
  });

  it('holds a tool that declared an outputSchema to it, unless the result is an error', () => {
    expect(toolResultProblems({ content: [text] }, needsNumberN)).toEqual(['structuredContent is missing, and the tool declares an outputSchema']);
    expect(toolResultProblems({ content: [text], structuredContent: { n: 'one' } }, needsNumberN)).toEqual([
      "structuredContent does not match the tool's outputSchema: data/n must be number",
    ]);
    expect(toolResultProblems({ content: [text], isError: true }, needsNumberN)).toBeUndefined();
    expect(toolResultProblems({ content: [text], isError: true, structuredContent: { n: 'one' } }, needsNumberN)).toBeUndefined();
  });

  it('names at most the first three problems', () => {
    const problems = toolResultProblems({ content: [1, 2, 3, 4, 5], isError: 1, _meta: 2 });
    expect(problems).toEqual(['content[0] is not an object', 'content[1] is not an object', 'content[2] is not an object']);
  });
});

describe('readResultProblems', () => {
  it('passes text and blob contents with fields it does not know', () => {
    expect(readResultProblems({ contents: [{ uri: 'a:1', text: 'x', mimeType: 'text/plain' }, { uri: 'a:2', blob: 'eA==', extra: 1 }] })).toBeUndefined();
    expect(readResultProblems({ contents: [] })).toBeUndefined();
  });

  it.each([
    [{}, 'contents is missing'],
    [{ contents: {} }, 'contents is not an array'],
    [{ contents: ['x'] }, 'contents[0] is not an object'],
    [{ contents: [{ text: 'x' }] }, 'contents[0] has no string uri'],
    [{ contents: [{ uri: 'a:1', text: 3 }] }, 'contents[0] has neither a string text nor a string blob'],
  ])('names what is wrong with %j', (result, problem) => {
    expect(readResultProblems(result)).toEqual([problem]);
  });
});

describe('promptResultProblems', () => {
  it('passes messages of either role with any content block', () => {
    const messages = [
      { role: 'user', content: text },
      { role: 'assistant', content: { type: 'resource_link', uri: 'file:///a', name: 'a' } },
    ];
    expect(promptResultProblems({ description: 'd', messages, future: true })).toBeUndefined();
  });

  it.each([
    [{}, 'messages is missing'],
    [{ messages: 'hi' }, 'messages is not an array'],
    [{ messages: [null] }, 'messages[0] is not an object'],
    [{ messages: [{ role: 'system', content: text }] }, 'messages[0].role is neither user nor assistant'],
    [{ messages: [{ role: 'user', content: [text] }] }, 'messages[0].content is not an object'],
    [{ messages: [{ role: 'user', content: { text: 'x' } }] }, 'messages[0].content has no string type'],
    [{ messages: [], description: 5 }, 'description is not a string'],
  ])('names what is wrong with %j', (result, problem) => {
    expect(promptResultProblems(result)).toEqual([problem]);
  });
});

describe('completionResultProblems', () => {
  it('passes a well-formed completion, however many values (the gateway cuts them)', () => {
    expect(completionResultProblems({ completion: { values: [] } })).toBeUndefined();
    expect(completionResultProblems({ completion: { values: Array(150).fill('v'), total: 150, hasMore: false }, _meta: {} })).toBeUndefined();
  });

  it.each([
    [{}, 'completion is missing'],
    [{ completion: [] }, 'completion is not an object'],
    [{ completion: {} }, 'completion.values is missing'],
    [{ completion: { values: 'a' } }, 'completion.values is not an array'],
    [{ completion: { values: ['a', null] } }, 'completion.values[1] is not a string'],
    [{ completion: { values: [], total: 1.5 } }, 'completion.total is not an integer'],
    [{ completion: { values: [], hasMore: 'yes' } }, 'completion.hasMore is not a boolean'],
  ])('%j: %s', (result, problem) => {
    expect(completionResultProblems(result)).toEqual([problem]);
  });
});
