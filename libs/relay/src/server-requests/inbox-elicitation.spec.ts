import { ErrorCode, McpError } from '@switchboard/core';
import { Inbox } from '@switchboard/inbox';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { elicitThroughInbox } from './inbox-elicitation.js';

const FORM = { mode: 'form', message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } };

/** What the upstream is told when nobody answers the question in the inbox within `timeoutMs`. */
async function expiredAfter(timeoutMs: number): Promise<McpError> {
  const inbox = new Inbox();
  const asked = elicitThroughInbox(FORM, { inbox, server: 'notes', principal: 'alice', timeoutMs }).then(
    () => undefined,
    (err: unknown) => err,
  );
  // The real inbox's deadline, on a clock the spec moves.
  await vi.advanceTimersByTimeAsync(timeoutMs);
  const error = await asked;
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe('an elicitation nobody answers in the inbox', () => {
  afterEach(() => vi.useRealTimers());

  it.each([
    // Rounded to whole seconds, 250 ms read "within 0 s" and 2.5 s "within 3 s".
    [250, 'Nobody answered the elicitation in the inbox within 250 ms'],
    [2500, 'Nobody answered the elicitation in the inbox within 2.5 s'],
    [120_000, 'Nobody answered the elicitation in the inbox within 2 min'],
  ])('is a timeout that says the time it had: %d ms', async (timeoutMs, message) => {
    vi.useFakeTimers();
    const error = await expiredAfter(timeoutMs);
    expect({ code: error.code, message: error.message }).toEqual({ code: ErrorCode.RequestTimeout, message });
  });
});
