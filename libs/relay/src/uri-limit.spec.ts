import { describe, expect, it } from 'vitest';
import { MAX_URI_CHARS } from '@switchboard/core';
import { overlongUri } from './uri-limit.js';

describe('overlongUri', () => {
  const over = 'x'.repeat(MAX_URI_CHARS + 1);
  const atLimit = 'x'.repeat(MAX_URI_CHARS);

  it('refuses a URI past the limit where each method carries one, naming the field, its length and the limit', () => {
    for (const method of ['resources/read', 'resources/subscribe', 'resources/unsubscribe']) {
      const refusal = overlongUri(method, { uri: over });
      expect(refusal?.rule).toBe('request:uri-too-long');
      expect(refusal?.error).toMatchObject({ code: -32602, message: `Invalid params: 'uri' is ${MAX_URI_CHARS + 1} characters; the limit is ${MAX_URI_CHARS}` });
    }
    expect(overlongUri('completion/complete', { ref: { type: 'ref/resource', uri: over } })?.error.message).toMatch(/^Invalid params: 'ref\.uri' is /);
  });

  it('lets a URI at the limit through, and leaves other fields and methods, and values that are no string, to the handlers', () => {
    expect(overlongUri('resources/read', { uri: atLimit })).toBeUndefined();
    expect(overlongUri('resources/read', { uri: 42 })).toBeUndefined();
    expect(overlongUri('resources/read', {})).toBeUndefined();
    expect(overlongUri('completion/complete', { ref: null })).toBeUndefined();
    expect(overlongUri('completion/complete', { ref: { type: 'ref/prompt', name: over } })).toBeUndefined();
    expect(overlongUri('tools/call', { uri: over })).toBeUndefined();
    expect(overlongUri('toString', { uri: over })).toBeUndefined();
  });
});
