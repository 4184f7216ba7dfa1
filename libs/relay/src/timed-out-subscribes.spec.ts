import { describe, expect, it } from 'vitest';
import {
  MAX_TIMED_OUT_SUBSCRIBES,
  MAX_TIMED_OUT_SUBSCRIBES_PER_CONNECTION,
  TIMED_OUT_SUBSCRIBE_MEMORY_MS,
  TimedOutSubscribes,
} from './timed-out-subscribes.js';

describe('TimedOutSubscribes', () => {
  it('finds the remembered URI a URI is, or is nearest under, on its own connection only', () => {
    const memory = new TimedOutSubscribes();
    memory.remember('c', 'a://x/', 0);
    memory.remember('c', 'a://x/y', 0);
    expect(memory.covering('c', 'a://x/y', 1)).toBe('a://x/y');
    expect(memory.covering('c', 'a://x/y/z', 1)).toBe('a://x/y');
    expect(memory.covering('c', 'a://x/w', 1)).toBe('a://x/');
    expect(memory.covering('c', 'a://xw', 1)).toBeUndefined();
    expect(memory.covering('other', 'a://x/w', 1)).toBeUndefined();
  });

  it('forgets a URI after TIMED_OUT_SUBSCRIBE_MEMORY_MS, and a connection that reconnected', () => {
    const memory = new TimedOutSubscribes();
    memory.remember('c', 'a://x/', 0);
    memory.remember('d', 'a://x/', 0);
    expect(memory.covering('c', 'a://x/y', TIMED_OUT_SUBSCRIBE_MEMORY_MS - 1)).toBe('a://x/');
    memory.forgetConnection('d');
    expect(memory.covering('d', 'a://x/y', 1)).toBeUndefined();
    expect(memory.covering('c', 'a://x/y', TIMED_OUT_SUBSCRIBE_MEMORY_MS)).toBeUndefined();
  });

  it('keeps the newest MAX_TIMED_OUT_SUBSCRIBES_PER_CONNECTION of a connection and MAX_TIMED_OUT_SUBSCRIBES in all', () => {
    const memory = new TimedOutSubscribes();
    for (let i = 0; i <= MAX_TIMED_OUT_SUBSCRIBES_PER_CONNECTION; i++) memory.remember('c', `a://${i}/`, i);
    expect(memory.covering('c', 'a://0/y', 100)).toBeUndefined();
    expect(memory.covering('c', 'a://1/y', 100)).toBe('a://1/');
    for (let i = 0; i < MAX_TIMED_OUT_SUBSCRIBES; i++) memory.remember(`d${i}`, 'a://x/', 200);
    expect(memory.covering('c', `a://${MAX_TIMED_OUT_SUBSCRIBES_PER_CONNECTION}/y`, 300)).toBeUndefined();
    expect(memory.covering(`d${MAX_TIMED_OUT_SUBSCRIBES - 1}`, 'a://x/y', 300)).toBe('a://x/');
  });
});
