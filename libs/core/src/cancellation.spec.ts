import { describe, expect, it, vi } from 'vitest';
import { Cancellation, anyCancelled } from './cancellation.js';

describe('Cancellation', () => {
  it('runs each listener once when aborted, and none removed or added later', () => {
    const c = new Cancellation();
    const kept = vi.fn();
    const removed = vi.fn();
    c.addEventListener('abort', kept);
    c.addEventListener('abort', kept); // the same listener twice runs once, as on an EventTarget
    c.addEventListener('abort', removed);
    c.removeEventListener('abort', removed);
    expect(c.aborted).toBe(false);
    c.abort();
    c.abort();
    expect(c.aborted).toBe(true);
    expect(kept).toHaveBeenCalledTimes(1);
    expect(removed).not.toHaveBeenCalled();
    const late = vi.fn();
    c.addEventListener('abort', late);
    expect(late).not.toHaveBeenCalled();
  });

  it('runs the other listeners when one throws, and does not swallow the error', async () => {
    const c = new Cancellation();
    const after = vi.fn();
    c.addEventListener('abort', () => {
      throw new Error('listener failed');
    });
    c.addEventListener('abort', after);
    // vitest's own handler would fail the test: ours takes the error while it runs.
    const previous = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    try {
      const caught = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
      c.abort();
      expect(after).toHaveBeenCalledTimes(1);
      expect(await caught).toMatchObject({ message: 'listener failed' });
    } finally {
      for (const listener of previous) process.on('uncaughtException', listener);
    }
  });
});

describe('anyCancelled', () => {
  it('is aborted once any of its signals is, and forgets them then', () => {
    const a = new Cancellation();
    const b = new AbortController();
    const any = anyCancelled(a, undefined, b.signal)!;
    expect(any.aborted).toBe(false);
    b.abort();
    expect(any.aborted).toBe(true);
    const later = vi.fn();
    any.addEventListener('abort', later);
    a.abort();
    expect(later).not.toHaveBeenCalled();
  });

  it('is the one signal given alone, none for none, and aborted at once if one already is', () => {
    const a = new Cancellation();
    expect(anyCancelled(undefined, a)).toBe(a);
    expect(anyCancelled(undefined)).toBeUndefined();
    const done = new Cancellation();
    done.abort();
    expect(anyCancelled(a, done)!.aborted).toBe(true);
  });
});
