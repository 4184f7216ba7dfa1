import { describe, expect, it } from 'vitest';
import { classifyMessage, invalidRequestAnswer, invalidResponseAsError } from './jsonrpc.js';

describe('classifyMessage', () => {
  it.each([
    [{ jsonrpc: '2.0', id: 1, method: 'x' }, 'request'],
    [{ jsonrpc: '2.0', id: 'a', method: 'x', params: {} }, 'request'],
    [{ jsonrpc: '2.0', method: 'x' }, 'notification'],
    [{ jsonrpc: '2.0', id: 1, result: {} }, 'response'],
    [{ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm' } }, 'response'],
    [{ jsonrpc: '2.0', id: null, error: { code: 1, message: 'm' } }, 'response'],
    [{ jsonrpc: '2.0', id: Number.MAX_SAFE_INTEGER, method: 'x' }, 'request'],
    [{ jsonrpc: '2.0', id: -Number.MAX_SAFE_INTEGER, method: 'x' }, 'request'],
  ])('accepts %j as a %s', (value, kind) => {
    expect(classifyMessage(value)).toBe(kind);
  });

  it.each([
    [null],
    [[]],
    ['x'],
    [{ id: 1, method: 'x' }],
    [{ jsonrpc: '1.0', id: 1, method: 'x' }],
    [{ jsonrpc: '2.0', id: null, method: 'x' }],
    [{ jsonrpc: '2.0', id: {}, method: 'x' }],
    [{ jsonrpc: '2.0', id: 1.5, method: 'x' }],
    [{ jsonrpc: '2.0', id: 2 ** 53, method: 'x' }],
    [JSON.parse('{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"x"}')],
    [{ jsonrpc: '2.0', id: 2 ** 53, result: {} }],
    [{ jsonrpc: '2.0', id: 1, method: '' }],
    [{ jsonrpc: '2.0', id: 1, method: 7 }],
    [{ jsonrpc: '2.0', id: 1, method: 'x', params: [1] }],
    [{ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'm' } }],
    [{ jsonrpc: '2.0', id: 1 }],
    [{ jsonrpc: '2.0', id: 1, error: { code: 'x', message: 'm' } }],
    [{ jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'm' } }],
  ])('rejects %j', (value) => {
    expect(classifyMessage(value)).toBe('invalid');
  });
});

describe('invalidResponseAsError', () => {
  it('turns an answer in the wrong shape into an error for its request', () => {
    for (const value of [
      { jsonrpc: '2.0', id: 3, result: null },
      { jsonrpc: '2.0', id: 3, result: [1, 2] },
      { jsonrpc: '2.0', id: 3, error: 'bad' },
      { jsonrpc: '2.0', id: 3, error: { code: 1.5, message: 'm' } },
    ]) {
      expect(invalidResponseAsError(value), JSON.stringify(value)).toEqual({
        jsonrpc: '2.0',
        id: 3,
        error: { code: -32000, message: 'The upstream sent an invalid response' },
      });
    }
  });

  it('leaves what names no request alone', () => {
    for (const value of [null, 'x', { jsonrpc: '2.0', id: null, result: {} }, { jsonrpc: '2.0', id: 1, method: 'x', result: {} }, { jsonrpc: '2.0', id: 1 }, { id: 1, result: null }]) {
      expect(invalidResponseAsError(value), JSON.stringify(value)).toBeUndefined();
    }
  });
});

describe('invalidRequestAnswer', () => {
  it('answers a request JSON-RPC does not allow under its id: -32602 for positional params, else -32600', () => {
    expect(invalidRequestAnswer({ jsonrpc: '2.0', id: 'a', method: 'roots/list', params: [1] })).toEqual({
      jsonrpc: '2.0',
      id: 'a',
      error: { code: -32602, message: 'Invalid params: MCP params must be an object' },
    });
    for (const value of [
      { jsonrpc: '1.0', id: 4, method: 'ping' },
      { jsonrpc: '2.0', id: 4, method: '' },
      { jsonrpc: '2.0', id: 4, method: 7 },
      { jsonrpc: '2.0', id: 4, method: 'ping', params: 'x' },
    ]) {
      expect(invalidRequestAnswer(value), JSON.stringify(value)).toEqual({
        jsonrpc: '2.0',
        id: 4,
        error: { code: -32600, message: 'Invalid request: not a JSON-RPC 2.0 message' },
      });
    }
  });

  it('answers nothing without a usable id, nor an answer in the wrong shape', () => {
    for (const value of [
      { jsonrpc: '2.0', id: null, method: 'ping' },
      { jsonrpc: '2.0', id: 1.5, method: 'ping' },
      { jsonrpc: '2.0', method: '', params: [] },
      { jsonrpc: '2.0', id: 3, result: null },
      [{ jsonrpc: '2.0', id: 3, method: '' }],
      'text',
    ]) {
      expect(invalidRequestAnswer(value), JSON.stringify(value)).toBeUndefined();
    }
  });
});
