import { silentLogger } from '@switchboard/observability';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IdleGc } from './idle-gc.js';

const MiB = 1024 * 1024;

describe('IdleGc', () => {
  /** The heap in use, as the test sets it; a collection brings it down to `live`. */
  let used: number;
  let live: number;
  let inFlight: number;
  const gc = vi.fn(() => {
    used = live;
  });
  const make = () =>
    new IdleGc(silentLogger(), { gc, idleMs: 5000, minGrowthBytes: 4 * MiB, busy: () => inFlight > 0, heapUsed: () => used });

  beforeEach(() => {
    vi.useFakeTimers();
    gc.mockClear();
    used = 40 * MiB;
    live = 28 * MiB;
    inFlight = 0;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('collects start-up garbage once the daemon has been idle for idleMs', () => {
    const idle = make();
    idle.activity();
    vi.advanceTimersByTime(4999);
    expect(gc).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(gc).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0); // nothing runs while it stays idle
  });

  it('each activity starts the idle period again', () => {
    const idle = make();
    idle.activity();
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(3000);
      idle.activity();
    }
    expect(gc).not.toHaveBeenCalled();
    vi.advanceTimersByTime(4999);
    expect(gc).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(gc).toHaveBeenCalledTimes(1);
  });

  it('waits while a call is in flight', () => {
    const idle = make();
    idle.activity();
    inFlight = 1;
    vi.advanceTimersByTime(60_000);
    expect(gc).not.toHaveBeenCalled();
    inFlight = 0;
    vi.advanceTimersByTime(5000);
    expect(gc).toHaveBeenCalledTimes(1);
  });

  it('collects again after a burst only if the heap grew by minGrowthBytes since the last collection', () => {
    const idle = make();
    idle.activity();
    vi.advanceTimersByTime(5000);
    expect(gc).toHaveBeenCalledTimes(1);

    used = live + 3 * MiB; // a small burst: not worth a collection
    idle.activity();
    vi.advanceTimersByTime(5000);
    expect(gc).toHaveBeenCalledTimes(1);

    used = live + 4 * MiB;
    idle.activity();
    vi.advanceTimersByTime(5000);
    expect(gc).toHaveBeenCalledTimes(2);
  });

  it('does nothing without gc, or once stopped', () => {
    const without = new IdleGc(silentLogger(), { heapUsed: () => used });
    without.activity();
    expect(vi.getTimerCount()).toBe(0);

    const idle = make();
    idle.activity();
    idle.stop();
    idle.activity();
    vi.advanceTimersByTime(60_000);
    expect(gc).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });
});
