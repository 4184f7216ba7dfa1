import { describe, expect, it } from 'vitest';
import { encodeBatch, encodeMessage, memberSpan, rememberJsonText } from './json-text.js';

const valueOf = (text: string, key: string) => {
  const span = memberSpan(text, key);
  return span && text.slice(span[0], span[1]);
};

describe('memberSpan', () => {
  it('finds a top-level member whatever its position and type', () => {
    const text = '{"result":{"content":[{"type":"text","text":"hi"}]},"jsonrpc":"2.0","id":7}';
    expect(valueOf(text, 'result')).toBe('{"content":[{"type":"text","text":"hi"}]}');
    expect(valueOf(text, 'jsonrpc')).toBe('"2.0"');
    expect(valueOf(text, 'id')).toBe('7');
    expect(valueOf('{"a":[1,[2,{"b":3}]],"b":null}', 'b')).toBe('null');
    expect(valueOf('{"a":-1.5e3}', 'a')).toBe('-1.5e3');
  });

  it('skips brackets, quotes and escapes inside strings, and nested members of the same name', () => {
    const text = JSON.stringify({ x: { result: 1 }, s: 'a "}] \\" {[ \\\\', result: { t: '\\"}' } });
    expect(JSON.parse(valueOf(text, 'result')!)).toEqual({ t: '\\"}' });
  });

  it('tolerates whitespace anywhere JSON allows it', () => {
    const text = ' {\n  "id" : 1 ,\r\n\t"result" :\n { "a" : [ 1 , 2 ] } \n}\n';
    expect(JSON.parse(valueOf(text, 'result')!)).toEqual({ a: [1, 2] });
  });

  it('returns undefined for an absent member, a non-object and an escaped key', () => {
    expect(memberSpan('{"error":{"code":1}}', 'result')).toBeUndefined();
    expect(memberSpan('[1,2]', 'result')).toBeUndefined();
    expect(memberSpan('{"res\\u0075lt":{}}', 'result')).toBeUndefined();
    expect(memberSpan('{}', 'result')).toBeUndefined();
  });

  it('agrees with JSON.parse on generated objects', () => {
    for (let n = 0; n < 200; n++) {
      const value = { pad: 'x'.repeat(n % 7), list: Array.from({ length: n % 5 }, (_, i) => ({ i, s: `"${'\\'.repeat(i)}]` })) };
      const message = n % 2 ? { jsonrpc: '2.0', result: value, id: n } : { id: `r${n}`, result: value, jsonrpc: '2.0' };
      const text = JSON.stringify(message, null, n % 3);
      expect(JSON.parse(valueOf(text, 'result')!)).toEqual(value);
    }
  });
});

describe('encodeMessage', () => {
  it('splices a remembered result text instead of serializing the object', () => {
    const result = { content: [{ type: 'text', text: 'from the object' }] };
    rememberJsonText(result, '{"content":[{"type":"text","text":"from the text"}]}');
    const text = encodeMessage({ jsonrpc: '2.0', id: 'a"b', result });
    expect(JSON.parse(text)).toEqual({ jsonrpc: '2.0', id: 'a"b', result: { content: [{ type: 'text', text: 'from the text' }] } });
  });

  it('serializes everything else as JSON.stringify does', () => {
    const messages = [
      { jsonrpc: '2.0' as const, id: 1, result: { ok: true } },
      { jsonrpc: '2.0' as const, id: null, error: { code: -32600, message: 'Invalid request' } },
      { jsonrpc: '2.0' as const, method: 'notifications/progress', params: { progress: 1 } },
    ];
    for (const m of messages) expect(encodeMessage(m)).toBe(JSON.stringify(m));
    expect(JSON.parse(encodeBatch(messages))).toEqual(messages);
  });
});
