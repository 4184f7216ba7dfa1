import type { JsonRpcNotification } from '@switchboard/core';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LogMessageBounds, MAX_LOG_MESSAGE_CHARS } from './log-message-bounds.js';

function sizes() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { sizes: new LogMessageBounds(log), lines };
}

const message = (params: Record<string, unknown>): JsonRpcNotification => ({ jsonrpc: '2.0', method: 'notifications/message', params });
const paramsOf = (n: JsonRpcNotification) => n.params as { level: string; logger?: string; data: unknown };

afterEach(() => vi.restoreAllMocks());

describe('LogMessageBounds', () => {
  it('relays a message within the bound as it is', () => {
    const n = message({ level: 'info', logger: 'db', data: { rows: 3 }, _meta: { x: 1 } });
    expect(sizes().sizes.bounded(n)).toBe(n);
  });

  it("cuts a long string's data to the bound with a note of its length, and warns", () => {
    const { sizes: s, lines } = sizes();
    const data = 'y'.repeat(3 * MAX_LOG_MESSAGE_CHARS);
    const out = paramsOf(s.bounded(message({ level: 'error', logger: 'db', data, extra: 'left out' })));
    expect(out).toEqual({ level: 'error', logger: 'db', data: `${'y'.repeat(MAX_LOG_MESSAGE_CHARS)}… [cut by Switchboard: ${data.length} characters in all]` });
    expect(lines).toMatchObject([{ level: 40, limit: MAX_LOG_MESSAGE_CHARS, msg: expect.stringContaining('relayed cut') }]);
  });

  it("cuts other data to the start of its JSON, serializing it only once", () => {
    const data = { list: Array.from({ length: 20_000 }, (_, i) => ({ i, name: `item ${i}` })) };
    const chars = JSON.stringify(data).length;
    const stringify = vi.spyOn(JSON, 'stringify');
    const params = { level: 'warning', data };
    const out = paramsOf(sizes().sizes.bounded(message(params)));
    // The log line of the warning is serialized too; the message itself once, the data never alone.
    const ofData = stringify.mock.calls.filter(([value]) => value === params || value === data);
    stringify.mockRestore();
    expect(ofData).toHaveLength(1);
    expect(out.data).toBe(`${JSON.stringify(data).slice(0, MAX_LOG_MESSAGE_CHARS)}… [cut by Switchboard: ${chars} characters in all]`);
    expect(out.level).toBe('warning');
  });

  it('drops a huge field other than data, and cuts a huge logger name', () => {
    const out = paramsOf(sizes().sizes.bounded(message({ level: 'info', logger: 'l'.repeat(1000), data: 'short', junk: 'j'.repeat(MAX_LOG_MESSAGE_CHARS) })));
    expect(out).toEqual({ level: 'info', logger: 'l'.repeat(256), data: 'short' });
  });

  it('replaces data nested too deep to serialize with a note', () => {
    let data: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) data = [data];
    expect(paramsOf(sizes().sizes.bounded(message({ level: 'info', data }))).data).toBe('[log data not relayed: it could not be serialized]');
  });

  it('warns at most once a second, and counts the rest', () => {
    vi.useFakeTimers();
    const { sizes: s, lines } = sizes();
    const big = message({ level: 'info', data: 'z'.repeat(MAX_LOG_MESSAGE_CHARS + 1) });
    for (let i = 0; i < 5; i++) s.bounded(big);
    expect(lines).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    expect(lines[1]).toMatchObject({ skipped: 4, msg: expect.stringContaining('4 more over') });
    vi.useRealTimers();
  });
});
