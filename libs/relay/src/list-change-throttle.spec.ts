import { afterEach, describe, expect, it, vi } from 'vitest';
import { LIST_CHANGED_BURST, LIST_CHANGED_EVERY_MS, ListChangeThrottle } from './list-change-throttle.js';

afterEach(() => vi.useRealTimers());

describe('ListChangeThrottle', () => {
  it('sends a burst of changes at once, then one a period, the changes between sent as one; each list apart', () => {
    vi.useFakeTimers();
    const sent: string[] = [];
    const count = (method: string) => sent.filter((m) => m === method).length;
    const throttle = new ListChangeThrottle((method) => sent.push(method));
    for (let i = 0; i < 200; i++) throttle.changed('tools');
    throttle.changed('prompts');
    expect(count('tools')).toBe(LIST_CHANGED_BURST);
    expect(count('prompts')).toBe(1);
    // The 190 held back: one notification once a token is back, none before.
    vi.advanceTimersByTime(LIST_CHANGED_EVERY_MS - 1);
    expect(count('tools')).toBe(LIST_CHANGED_BURST);
    vi.advanceTimersByTime(1);
    expect(count('tools')).toBe(LIST_CHANGED_BURST + 1);
    // Nothing changed since: nothing more is sent.
    vi.advanceTimersByTime(10 * LIST_CHANGED_EVERY_MS);
    expect(count('tools')).toBe(LIST_CHANGED_BURST + 1);
    // After a quiet while the burst is back.
    for (let i = 0; i < LIST_CHANGED_BURST; i++) throttle.changed('tools');
    expect(count('tools')).toBe(2 * LIST_CHANGED_BURST + 1);
  });

  it('a storm that goes on is announced once a period', () => {
    vi.useFakeTimers();
    const sent: string[] = [];
    const throttle = new ListChangeThrottle((method) => sent.push(method));
    // A change every 5 ms for 10 periods.
    for (let t = 0; t < 10 * LIST_CHANGED_EVERY_MS; t += 5) {
      throttle.changed('tools');
      vi.advanceTimersByTime(5);
    }
    vi.advanceTimersByTime(LIST_CHANGED_EVERY_MS);
    expect(sent.length).toBeGreaterThanOrEqual(LIST_CHANGED_BURST + 9);
    expect(sent.length).toBeLessThanOrEqual(LIST_CHANGED_BURST + 11);
  });
});
