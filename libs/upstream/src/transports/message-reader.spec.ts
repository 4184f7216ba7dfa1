import type { JsonRpcErrorResponse, JsonRpcMessage } from '@switchboard/core';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { UpstreamMessageReader } from './message-reader.js';

/** A reader whose answers, deliveries and log lines are kept to look at. */
function reading() {
  const logged: string[] = [];
  const answered: JsonRpcErrorResponse[] = [];
  const delivered: JsonRpcMessage[] = [];
  const reader = new UpstreamMessageReader({
    logger: pino({ level: 'debug' }, { write: (line: string) => void logged.push(line) }),
    redactText: (text) => text.replace(/hunter2/g, '[redacted]'),
    send: async (refusal) => void answered.push(refusal),
    deliver: (message) => void delivered.push(message),
  });
  return { reader, logged, answered, delivered };
}

/** A JSON value nested `depth` arrays deep: JSON.parse reads it, JSON.stringify throws RangeError on it. */
const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const DEPTH = 100_000;

describe('UpstreamMessageReader', () => {
  it('delivers a message, and a batch item by item', () => {
    const { reader, delivered } = reading();
    reader.read('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}');
    reader.read('[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]');
    expect(delivered.map((m) => ('id' in m ? m.id : 'note'))).toEqual(['note', 1, 2]);
  });

  it('logs what is not JSON, redacted, and answers nothing', () => {
    const { reader, logged, answered, delivered } = reading();
    reader.read('not json: password=hunter2');
    expect(logged.join('')).toContain('upstream sent something that is not JSON');
    expect(logged.join('')).not.toContain('hunter2');
    expect([answered, delivered]).toEqual([[], []]);
  });

  it('answers a request nested too deep to stringify -32600, and logs it from its text', () => {
    expect(() => JSON.stringify(JSON.parse(deep(DEPTH)))).toThrow(RangeError);
    const { reader, logged, answered } = reading();
    reader.read(`{"jsonrpc":"1.0","id":"probe-deep","method":"ping","params":{"x":${deep(DEPTH)}}}`);
    expect(answered).toEqual([{ jsonrpc: '2.0', id: 'probe-deep', error: { code: -32600, message: 'Invalid request: not a JSON-RPC 2.0 message' } }]);
    const line = logged.find((l) => l.includes('not a JSON-RPC message'));
    expect(line).toContain('probe-deep');
  });

  it('fails at once a call answered with both result and error, nested too deep to stringify', () => {
    const { reader, delivered } = reading();
    reader.read(`{"jsonrpc":"2.0","id":7,"result":{"x":${deep(DEPTH)}},"error":{"code":1,"message":"m"}}`);
    expect(delivered).toEqual([{ jsonrpc: '2.0', id: 7, error: { code: expect.any(Number), message: 'The upstream sent an invalid response' } }]);
  });

  it('loses no item of a batch after one that throws', () => {
    const logged: string[] = [];
    const delivered: JsonRpcMessage[] = [];
    const reader = new UpstreamMessageReader({
      logger: pino({ level: 'debug' }, { write: (line: string) => void logged.push(line) }),
      redactText: (text) => text,
      send: async () => undefined,
      deliver: (message) => {
        if ('id' in message && message.id === 1) throw new Error('handler broke');
        delivered.push(message);
      },
    });
    reader.read('[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]');
    expect(delivered).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
    expect(logged.join('')).toContain('handling a message from the upstream failed');
  });
});
