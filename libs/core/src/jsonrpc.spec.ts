import { describe, expect, it } from 'vitest';
import { classifyMessage } from './jsonrpc.js';

describe('classifyMessage', () => {
  it.each([
    [{ jsonrpc: '2.0', id: 1, method: 'x' }, 'request'],
    [{ jsonrpc: '2.0', id: 'a', method: 'x', params: {} }, 'request'],
    [{ jsonrpc: '2.0', method: 'x' }, 'notification'],
    [{ jsonrpc: '2.0', id: 1, result: {} }, 'response'],
    [{ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm' } }, 'response'],
    [{ jsonrpc: '2.0', id: null, error: { code: 1, message: 'm' } }, 'response'],
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
    [{ jsonrpc: '2.0', id: 1, method: '' }],
    [{ jsonrpc: '2.0', id: 1, method: 7 }],
    [{ jsonrpc: '2.0', id: 1, method: 'x', params: [1] }],
    [{ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'm' } }],
    [{ jsonrpc: '2.0', id: 1 }],
    [{ jsonrpc: '2.0', id: 1, error: { code: 'x', message: 'm' } }],
  ])('rejects %j', (value) => {
    expect(classifyMessage(value)).toBe('invalid');
  });
});
