import { describe, expect, it } from 'vitest';
import { outcomeOf, requestBody, toolCall } from './jsonrpc.js';

describe('requestBody', () => {
  it('builds a valid JSON-RPC request from pre-serialised params', () => {
    const body = requestBody(12, toolCall('bench__echo', { text: 'a "quoted" text' }));
    expect(JSON.parse(body)).toEqual({
      jsonrpc: '2.0',
      id: 12,
      method: 'tools/call',
      params: { name: 'bench__echo', arguments: { text: 'a "quoted" text' } },
    });
  });
});

describe('outcomeOf', () => {
  it('is ok for a result', () => {
    expect(outcomeOf({ jsonrpc: '2.0', id: 1, result: { content: [] } })).toEqual({ ok: true, result: { content: [] } });
  });

  it('fails on a JSON-RPC error', () => {
    const outcome = outcomeOf({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } });
    expect(outcome).toEqual({ ok: false, error: 'JSON-RPC error -32601 Method not found' });
  });

  it('fails on a tool result with isError', () => {
    const outcome = outcomeOf({ jsonrpc: '2.0', id: 1, result: { isError: true, content: [{ type: 'text', text: 'boom' }] } });
    expect(outcome).toEqual({ ok: false, error: 'tool error: boom' });
  });

  it('fails on something that is not a response', () => {
    expect(outcomeOf(undefined).ok).toBe(false);
    expect(outcomeOf({ jsonrpc: '2.0', id: 1 }).ok).toBe(false);
  });
});
