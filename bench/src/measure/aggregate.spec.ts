import { describe, expect, it } from 'vitest';
import { aggregate, medianDifference, medianRatio } from './aggregate.js';
import { windowOf } from '../testing/windows.js';

describe('medianRatio', () => {
  it('pairs windows of the same round and takes the median of the ratios', () => {
    const windows = [
      // Round 2 was slow for everyone: per-round ratios cancel it out.
      windowOf('direct-http', 1, 1, { p50Ms: 1 }),
      windowOf('direct-http', 1, 2, { p50Ms: 10 }),
      windowOf('direct-http', 1, 3, { p50Ms: 2 }),
      windowOf('sb', 1, 1, { p50Ms: 1.2 }),
      windowOf('sb', 1, 2, { p50Ms: 12 }),
      windowOf('sb', 1, 3, { p50Ms: 3 }),
    ];
    expect(medianRatio(windows, 'sb', 'direct-http', 'echo', 1, 'p50Ms')).toBeCloseTo(1.2);
  });

  it('is NaN when the reference has no window in that slot', () => {
    expect(medianRatio([windowOf('sb', 16, 1)], 'sb', 'direct-http', 'echo', 16, 'p50Ms')).toBeNaN();
  });
});

describe('medianDifference', () => {
  it('pairs windows of the same round and takes the median of the differences', () => {
    const windows = [
      windowOf('off', 16, 1, { p50Ms: 1 }),
      windowOf('off', 16, 2, { p50Ms: 5 }),
      windowOf('off', 16, 3, { p50Ms: 1 }),
      windowOf('on', 16, 1, { p50Ms: 1.3 }),
      windowOf('on', 16, 2, { p50Ms: 5.1 }),
      windowOf('on', 16, 3, { p50Ms: 0.8 }),
    ];
    expect(medianDifference(windows, 'on', 'off', 'echo', 16, 'p50Ms')).toBeCloseTo(0.1); // of 0.3, 0.1, -0.2
    expect(medianDifference(windows, 'on', 'missing', 'echo', 16, 'p50Ms')).toBeNaN();
  });
});

describe('aggregate', () => {
  it('gives one row per target and concurrency with medians, ratios and summed failures', () => {
    const windows = [
      windowOf('direct-http', 1, 1, { callsPerSec: 100 }),
      windowOf('direct-http', 1, 2, { callsPerSec: 300 }),
      windowOf('sb', 1, 1, { callsPerSec: 200, failures: 2, failureSamples: ['x'] }),
      windowOf('sb', 1, 2, { callsPerSec: 300, failures: 1, failureSamples: ['x', 'y'] }),
      windowOf('direct-http', 16, 1),
    ];
    const rows = aggregate(windows, 'direct-http', ['direct-http', 'sb']);
    expect(rows.map((row) => `${row.concurrency} ${row.target}`)).toEqual(['1 direct-http', '1 sb', '16 direct-http']);
    const sb = rows[1]!;
    expect(sb.metrics.callsPerSec.value).toBe(250);
    expect(sb.metrics.callsPerSec.ratio).toBeCloseTo(1.5); // median of 2.0 and 1.0
    expect(sb.failures).toBe(3);
    expect(sb.failureSamples).toEqual(['x', 'y']);
    expect(rows[0]!.metrics.p50Ms.ratio).toBe(1);
  });
});
