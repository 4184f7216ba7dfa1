import { describe, expect, it } from 'vitest';
import { shapeServerRequest, Unanswerable } from './shape-server-request.js';

type Item = Record<string, unknown>;

const OLDER = ['2024-11-05', '2025-03-26', '2025-06-18'];
const text = (t: string) => ({ type: 'text', text: t });
const audio = { type: 'audio', data: 'AA==', mimeType: 'audio/wav' };
const sampling = (messages: unknown[], more: Item = {}): Item => ({ messages, maxTokens: 10, ...more });
const lacking = (shaped: unknown) => (shaped instanceof Unanswerable ? shaped.lacking : undefined);

/** A 2025-11-25 form with every field kind and every field that revision added. */
const newestForm = (): Item => ({
  mode: 'form',
  message: 'Tell me',
  task: { ttl: 1000 },
  _meta: { 'example.com/k': 1 },
  requestedSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      name: { type: 'string', title: 'Name', default: 'Ada', minLength: 1 },
      age: { type: 'integer', default: 30, maximum: 150 },
      ok: { type: 'boolean', default: true },
      size: { type: 'string', enum: ['s', 'm'], enumNames: ['Small', 'Medium'], default: 's' },
      colour: { type: 'string', title: 'Colour', oneOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }], default: 'r' },
    },
    required: ['name'],
  },
});

describe('shapeServerRequest: the newest revision and unknown ones get the very same object', () => {
  for (const version of ['2025-11-25', '2026-07-28', '']) {
    it(version || 'no version yet', () => {
      const url = { mode: 'url', message: 'm', url: 'https://x.test/', elicitationId: 'e' };
      const tools = sampling([{ role: 'user', content: [text('a'), { type: 'tool_result', toolUseId: 't', content: [] }] }], { tools: [] });
      for (const [method, params] of [['elicitation/create', newestForm()], ['elicitation/create', url], ['sampling/createMessage', tools], ['roots/list', {}]] as const) {
        expect(shapeServerRequest(method, params, version)).toBe(params);
      }
    });
  }

  it('older revisions get the same object too when nothing needs shaping', () => {
    const plain = sampling([{ role: 'user', content: text('hi') }], { systemPrompt: 's', includeContext: 'none', _meta: { k: 1 } });
    for (const version of OLDER) expect(shapeServerRequest('sampling/createMessage', plain, version)).toBe(plain);
    const form = { message: 'm', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean', default: false } } } };
    expect(shapeServerRequest('elicitation/create', form, '2025-06-18')).toBe(form);
    const roots = { _meta: { progressToken: 1 } };
    for (const version of OLDER) expect(shapeServerRequest('roots/list', roots, version)).toBe(roots);
  });
});

describe('shapeServerRequest: elicitation', () => {
  it('before 2025-06-18 the method does not exist: unanswerable, form or not', () => {
    for (const version of ['2024-11-05', '2025-03-26']) {
      expect(lacking(shapeServerRequest('elicitation/create', { message: 'm', requestedSchema: { type: 'object', properties: {} } }, version))).toBe('elicitation/create');
    }
  });

  it('2025-06-18: url mode and multi-select fields cannot be asked', () => {
    expect(lacking(shapeServerRequest('elicitation/create', { mode: 'url', message: 'm', url: 'https://x.test/', elicitationId: 'e' }, '2025-06-18'))).toBe('url-mode elicitation');
    const multi = { message: 'm', requestedSchema: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string', enum: ['a'] } } } } };
    expect(lacking(shapeServerRequest('elicitation/create', multi, '2025-06-18'))).toBe('multi-select fields in elicitation forms');
  });

  it('2025-06-18: a form without mode, task, $schema and defaults (but on booleans); titled choices become enum and enumNames', () => {
    const input = newestForm();
    const before = JSON.stringify(input);
    expect(shapeServerRequest('elicitation/create', input, '2025-06-18')).toEqual({
      message: 'Tell me',
      _meta: { 'example.com/k': 1 },
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', title: 'Name', minLength: 1 },
          age: { type: 'integer', maximum: 150 },
          ok: { type: 'boolean', default: true },
          size: { type: 'string', enum: ['s', 'm'], enumNames: ['Small', 'Medium'] },
          colour: { type: 'string', title: 'Colour', enum: ['r', 'g'], enumNames: ['Red', 'Green'] },
        },
        required: ['name'],
      },
    });
    expect(JSON.stringify(input)).toBe(before);
  });

  it('keeps a field named __proto__ a field', () => {
    const properties = JSON.parse('{"__proto__": {"type": "string", "default": "x"}}') as Item;
    const shaped = shapeServerRequest('elicitation/create', { message: 'm', requestedSchema: { type: 'object', properties } }, '2025-06-18') as Item;
    const fields = (shaped.requestedSchema as Item).properties as Item;
    expect(Object.keys(fields)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(fields, '__proto__')?.value).toEqual({ type: 'string' });
  });
});

describe('shapeServerRequest: sampling', () => {
  it('tool use (tools, toolChoice, tool_use or tool_result blocks) cannot be asked before 2025-11-25', () => {
    const toolUse = { type: 'tool_use', id: 't1', name: 'f', input: {} };
    const toolResult = { type: 'tool_result', toolUseId: 't1', content: [text('42')] };
    for (const version of OLDER) {
      for (const params of [
        sampling([{ role: 'user', content: text('hi') }], { tools: [{ name: 'f', inputSchema: { type: 'object' } }] }),
        sampling([{ role: 'user', content: text('hi') }], { toolChoice: { mode: 'none' } }),
        sampling([{ role: 'assistant', content: toolUse }]),
        sampling([{ role: 'assistant', content: [toolUse] }, { role: 'user', content: [toolResult] }]),
      ]) {
        expect(lacking(shapeServerRequest('sampling/createMessage', params, version))).toBe('tool use in sampling');
      }
    }
  });

  it('a message holding a list of blocks becomes one message per block, with its role; task is left out', () => {
    const input = sampling([{ role: 'user', content: [text('look'), { type: 'image', data: 'AA==', mimeType: 'image/png' }] }, { role: 'assistant', content: [] }, { role: 'user', content: [text('well?')] }], { task: { ttl: 5 } });
    expect(shapeServerRequest('sampling/createMessage', input, '2025-06-18')).toEqual(
      sampling([
        { role: 'user', content: text('look') },
        { role: 'user', content: { type: 'image', data: 'AA==', mimeType: 'image/png' } },
        { role: 'user', content: text('well?') },
      ]),
    );
  });

  it('audio is in sampling messages from 2025-03-26; before, a text block says what it was; lastModified goes before 2025-06-18', () => {
    const withAudio = sampling([{ role: 'user', content: audio }]);
    expect(shapeServerRequest('sampling/createMessage', withAudio, '2025-03-26')).toBe(withAudio);
    expect(shapeServerRequest('sampling/createMessage', withAudio, '2024-11-05')).toEqual(
      sampling([{ role: 'user', content: { type: 'text', text: expect.stringMatching(/audio.*audio\/wav.*omitted/) } }]),
    );
    const dated = sampling([{ role: 'user', content: { ...text('x'), annotations: { priority: 1, lastModified: '2025-01-01T00:00:00Z' } } }]);
    expect(shapeServerRequest('sampling/createMessage', dated, '2025-03-26')).toEqual(sampling([{ role: 'user', content: { ...text('x'), annotations: { priority: 1 } } }]));
    expect(shapeServerRequest('sampling/createMessage', dated, '2025-06-18')).toBe(dated);
  });
});
