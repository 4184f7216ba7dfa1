import { encodeMessage, type JsonRpcMessage } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { keepResultText } from './keep-result-text.js';

/** An upstream's answer as it may be sent: long enough to be passed through as text. */
function answer(indent?: number): { text: string; message: JsonRpcMessage } {
  const value = { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'x'.repeat(5000) }] } };
  const text = JSON.stringify(value, null, indent);
  return { text, message: JSON.parse(text) as JsonRpcMessage };
}

describe('keepResultText', () => {
  it('passes a long result through as the text it came in', () => {
    const { text, message } = answer();
    keepResultText(message, text);
    expect(encodeMessage(message)).toBe(text);
  });

  it('never passes on a line break between tokens: one message must stay one SSE data line and one stdio line', () => {
    for (const indent of [2, '\t', '\r\n'] as const) {
      const text = JSON.stringify(JSON.parse(answer().text), null, indent as never);
      const message = JSON.parse(text) as JsonRpcMessage;
      keepResultText(message, text);
      const encoded = encodeMessage(message);
      expect(encoded).not.toMatch(/[\r\n]/);
      expect(JSON.parse(encoded)).toEqual(JSON.parse(text));
    }
  });
});
