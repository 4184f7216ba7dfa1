import { describe, expect, it } from 'vitest';
import { shapeUpstreamRequest } from './shape-upstream-request.js';

const complete = {
  ref: { type: 'ref/prompt', name: 'greet', title: 'Greeting' },
  argument: { name: 'name', value: 'al' },
  context: { arguments: { salutation: 'Dear' } },
  _meta: { trace: 't' },
};

describe('shapeUpstreamRequest', () => {
  it.each(['2024-11-05', '2025-03-26'])('leaves the context and a prompt title out of completion/complete to a %s upstream', (version) => {
    expect(shapeUpstreamRequest('completion/complete', complete, version)).toEqual({
      ref: { type: 'ref/prompt', name: 'greet' },
      argument: { name: 'name', value: 'al' },
      _meta: { trace: 't' },
    });
    expect(complete.context).toBeDefined();
  });

  it.each(['2025-06-18', '2025-11-25', undefined])('passes the same object to a %s upstream', (version) => {
    expect(shapeUpstreamRequest('completion/complete', complete, version)).toBe(complete);
  });

  it('keeps fields no revision defines, on a resource reference too, and leaves other methods alone', () => {
    const resource = { ref: { type: 'ref/resource', uri: 'a://{x}', title: 'vendor' }, argument: { name: 'x', value: '' } };
    expect(shapeUpstreamRequest('completion/complete', resource, '2024-11-05')).toBe(resource);
    const call = { name: 't', arguments: {}, context: 'a vendor field' };
    expect(shapeUpstreamRequest('tools/call', call, '2024-11-05')).toBe(call);
  });
});
