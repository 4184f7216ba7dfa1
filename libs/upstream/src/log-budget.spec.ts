import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_LOG_MESSAGES_PER_SECOND, logMessageBudget } from './log-budget.js';

function logLines() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

afterEach(() => vi.useRealTimers());

describe('logMessageBudget', () => {
  it(`lets ${MAX_LOG_MESSAGES_PER_SECOND} messages a second through and logs the count of the rest once the second is over`, () => {
    vi.useFakeTimers();
    const { log, lines } = logLines();
    const budget = logMessageBudget(log);
    const passed = Array.from({ length: 250 }, () => budget.take()).filter(Boolean).length;
    expect(passed).toBe(MAX_LOG_MESSAGES_PER_SECOND);
    expect(lines).toEqual([]);
    vi.advanceTimersByTime(1000);
    expect(lines.map((l) => l['skipped'])).toEqual([150]);
    // A new second: as many again.
    expect(Array.from({ length: 150 }, () => budget.take()).filter(Boolean).length).toBe(MAX_LOG_MESSAGES_PER_SECOND);
    budget.stop();
    expect(lines.map((l) => l['skipped'])).toEqual([150, 50]);
  });
});
