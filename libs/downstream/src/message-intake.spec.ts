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
