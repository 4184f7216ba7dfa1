import { describe, expect, it } from 'vitest';
import type { DownstreamSession } from '../session.js';
import { elicitationSchemaProblems } from '@switchboard/inbox';
import { hostCanAnswer, hostSamplesWithTools } from './host-capability.js';

const hostWith = (clientCapabilities: Record<string, unknown>) => ({ clientCapabilities }) as unknown as DownstreamSession;

describe('hostCanAnswer', () => {
  const form = { message: 'm', requestedSchema: { type: 'object', properties: {} } };
  const url = { mode: 'url', message: 'm', url: 'https://x.test', elicitationId: 'e1' };
  it.each([
    ['elicitation: {} takes forms only', { elicitation: {} }, true, false],
    ['form and url', { elicitation: { form: {}, url: {} } }, true, true],
    ['url only', { elicitation: { url: {} } }, false, true],
    ['form only', { elicitation: { form: {} } }, true, false],
    ['no elicitation', { sampling: {} }, false, false],
  ])('%s', (_label, caps, takesForm, takesUrl) => {
    expect(hostCanAnswer(hostWith(caps), 'elicitation/create', form)).toBe(takesForm);
    expect(hostCanAnswer(hostWith(caps), 'elicitation/create', url)).toBe(takesUrl);
  });

  it('needs sampling for sampling, roots for roots, and knows nothing else', () => {
    expect(hostCanAnswer(hostWith({ sampling: {} }), 'sampling/createMessage', {})).toBe(true);
    expect(hostCanAnswer(hostWith({ roots: {} }), 'sampling/createMessage', {})).toBe(false);
    expect(hostCanAnswer(hostWith({ roots: { listChanged: true } }), 'roots/list', {})).toBe(true);
    expect(hostCanAnswer(hostWith({ sampling: {} }), 'tasks/get', {})).toBe(false);
    expect(hostSamplesWithTools(hostWith({ sampling: {} }))).toBe(false);
    expect(hostSamplesWithTools(hostWith({ sampling: { tools: {} } }))).toBe(true);
  });
});

describe('elicitationSchemaProblems', () => {
  it('accepts the restricted subset', () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 50 },
        email: { type: 'string', format: 'email' },
        age: { type: 'integer', minimum: 0 },
        score: { type: 'number', maximum: 10 },
        ok: { type: 'boolean', default: true },
        colour: { type: 'string', enum: ['red', 'green'] },
        size: { type: 'string', oneOf: [{ const: 's', title: 'Small' }] },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
        more: { type: 'array', items: { anyOf: [{ const: 'x', title: 'X' }] } },
      },
      required: ['name'],
    };
    expect(elicitationSchemaProblems(schema)).toEqual([]);
  });

  it('lists every problem: nesting, unknown formats and types, bad required', () => {
    const problems = elicitationSchemaProblems({
      type: 'object',
      properties: {
        nested: { type: 'object', properties: {} },
        when: { type: 'string', format: 'time' },
        list: { type: 'array', items: { type: 'string' } },
        low: { type: 'number', minimum: 'zero' },
      },
      required: ['missing'],
    });
    expect(problems).toEqual([
      'properties.nested.type must be string, number, integer, boolean or array (nested objects are not allowed)',
      'properties.when.format must be one of email, uri, date, date-time',
      'properties.list.items must give the choices (enum or anyOf)',
      'properties.low.minimum must be a number',
      'requestedSchema.required must list names of properties',
    ]);
    expect(elicitationSchemaProblems(undefined)).toEqual(['requestedSchema must be an object']);
  });
});
