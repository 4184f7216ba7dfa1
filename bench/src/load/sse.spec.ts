import { describe, expect, it } from 'vitest';
import { findResponse, sseDataOf } from './sse.js';

describe('sseDataOf', () => {
  it('returns the data of each event', () => {
    expect(sseDataOf('event: message\ndata: {"a":1}\n\nevent: message\ndata: {"b":2}\n\n')).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('joins multi-line data with newlines and strips one leading space', () => {
    expect(sseDataOf('data: first\ndata:second\ndata:  third\n\n')).toEqual(['first\nsecond\n third']);
  });

  it('accepts CRLF and CR line endings', () => {
    expect(sseDataOf('data: one\r\n\r\ndata: two\r\rdata: three\n\n')).toEqual(['one', 'two', 'three']);
  });

  it('skips comments, id/retry fields and events without data (priming events)', () => {
    expect(sseDataOf(': keep-alive\n\nid: 17\ndata:\n\nid: 18\nretry: 1000\ndata: real\n\n')).toEqual(['real']);
  });

  it('keeps a last event that is not followed by a blank line', () => {
    expect(sseDataOf('data: done')).toEqual(['done']);
  });
});

describe('findResponse', () => {
  it('finds the response by id in an event stream, after notifications', () => {
    const body =
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n' +
      'event: message\ndata: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n\n';
    expect(findResponse('text/event-stream', body, 7)).toEqual({ jsonrpc: '2.0', id: 7, result: { content: [] } });
  });

  it('reads a plain JSON body, single or batched', () => {
    expect(findResponse('application/json', '{"jsonrpc":"2.0","id":3,"result":{}}', 3)).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    expect(findResponse('application/json; charset=utf-8', '[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}]', 3)).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -1, message: 'x' },
    });
  });

  it('is undefined when the id is not answered or the body is not JSON', () => {
    expect(findResponse('text/event-stream', 'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n', 2)).toBeUndefined();
    expect(findResponse('application/json', 'Not Found', 1)).toBeUndefined();
    expect(findResponse(undefined, '', 1)).toBeUndefined();
  });

  it('does not take a server request with the same id for the response', () => {
    expect(findResponse('text/event-stream', 'data: {"jsonrpc":"2.0","id":4,"method":"ping"}\n\n', 4)).toBeUndefined();
  });
});
