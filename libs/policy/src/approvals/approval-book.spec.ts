import { describe, expect, it } from 'vitest';
import { ApprovalBook, type ApprovalBinding } from './approval-book.js';

describe('ApprovalBook', () => {
  const binding: ApprovalBinding = { principal: 'alice', tool: 'fs__delete', argumentsDigest: 'a1', policyDigest: 'p1', rule: 'ask-deletes' };

  it('covers exactly the remembered call until it runs out', () => {
    let now = 1_000;
    const book = new ApprovalBook(() => now);
    expect(book.covers(binding)).toBe(false);
    book.remember(binding, 60_000);
    expect(book.covers(binding)).toBe(true);
    expect(book.covers({ ...binding, argumentsDigest: 'a2' })).toBe(false);
    expect(book.covers({ ...binding, policyDigest: 'p2' })).toBe(false);
    expect(book.covers({ ...binding, principal: 'bob' })).toBe(false);
    // Another rule decides the same call (the caller's roles changed): asked again.
    expect(book.covers({ ...binding, rule: 'lead-approves-deletes' })).toBe(false);
    now += 60_000;
    expect(book.covers(binding)).toBe(false);
    expect(book.size).toBe(0);
  });

  it('does not remember a one-off approval, and forgets by principal', () => {
    const book = new ApprovalBook();
    book.remember(binding, 0);
    expect(book.size).toBe(0);
    book.remember(binding, 1000);
    book.remember({ ...binding, principal: 'bob' }, 1000);
    book.forget('alice');
    expect(book.covers(binding)).toBe(false);
    expect(book.covers({ ...binding, principal: 'bob' })).toBe(true);
  });

  it('at its bound, drops approvals that ran out before one still running', () => {
    let now = 0;
    const book = new ApprovalBook(() => now);
    // The oldest entry runs for a day; the 9,999 after it for a minute each.
    book.remember(binding, 86_400_000);
    for (let i = 1; i < 10_000; i++) book.remember({ ...binding, argumentsDigest: `short${i}` }, 60_000);
    now += 120_000;
    book.remember({ ...binding, argumentsDigest: 'new' }, 60_000);
    expect(book.covers(binding)).toBe(true);
    expect(book.covers({ ...binding, argumentsDigest: 'new' })).toBe(true);
    expect(book.size).toBe(2);
  });
});
