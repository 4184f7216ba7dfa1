import { describe, expect, it } from 'vitest';
import { MAX_BATCH_MESSAGES, takeMessages } from './message-intake.js';

const pings = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));

describe('takeMessages: batches', () => {
  it('takes a batch of up to MAX_BATCH_MESSAGES on 2025-03-26', () => {
    const intake = takeMessages(pings(MAX_BATCH_MESSAGES), '2025-03-26');
    expect(intake).toMatchObject({ ok: true, batch: true, errors: [] });
    expect(intake.ok && intake.messages).toHaveLength(MAX_BATCH_MESSAGES);
  });

  it('refuses a larger one whole with -32600 and a null id, before taking any of it', () => {
    const intake = takeMessages(pings(MAX_BATCH_MESSAGES + 1), '2025-03-26');
    expect(intake).toEqual({
      ok: false,
      error: { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid request: a batch may hold at most ${MAX_BATCH_MESSAGES} messages (this one has ${MAX_BATCH_MESSAGES + 1})` } },
    });
  });
});

describe('takeMessages: an answer in a shape JSON-RPC does not allow', () => {
  it('becomes an error for the request it answers, and the host hears of it without that id', () => {
    const intake = takeMessages({ jsonrpc: '2.0', id: 3, result: null }, '2025-06-18');
    expect(intake).toEqual({
      ok: true,
      batch: false,
      messages: [{ jsonrpc: '2.0', id: 3, error: { code: -32000, message: 'The host sent an invalid response' } }],
      errors: [{ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request: a response in a shape JSON-RPC does not allow' } }],
    });
  });

  it('a request in a bad shape is still answered under its id', () => {
    const intake = takeMessages({ jsonrpc: '2.0', id: 4, method: 'x', params: 'y' }, '2025-06-18');
    expect(intake).toMatchObject({ ok: true, messages: [], errors: [{ id: 4, error: { code: -32600 } }] });
  });
});
