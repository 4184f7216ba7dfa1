import { describe, expect, it } from 'vitest';
import { latencySummary, median, percentileOfSorted, ratio } from './stats.js';

describe('percentileOfSorted', () => {
  const hundred = Float64Array.from({ length: 100 }, (_, i) => i + 1); // 1..100

  it('uses the nearest rank', () => {
    expect(percentileOfSorted(hundred, 50)).toBe(50);
    expect(percentileOfSorted(hundred, 90)).toBe(90);
    expect(percentileOfSorted(hundred, 99)).toBe(99);
    expect(percentileOfSorted(hundred, 100)).toBe(100);
    expect(percentileOfSorted(hundred, 0)).toBe(1);
  });

  it('rounds the rank up on small samples', () => {
    expect(percentileOfSorted([10, 20, 30], 50)).toBe(20);
    expect(percentileOfSorted([10, 20, 30], 99)).toBe(30);
    expect(percentileOfSorted([7], 99)).toBe(7);
  });

  it('is NaN for no samples', () => {
    expect(percentileOfSorted([], 50)).toBeNaN();
  });
});

describe('latencySummary', () => {
  it('sorts numerically, not as strings', () => {
    const summary = latencySummary([10, 9, 100, 2, 1]);
    expect(summary.p50).toBe(9);
    expect(summary.p99).toBe(100);
  });
});

describe('median', () => {
  it('takes the middle of an odd count and the mean of the middle two of an even one', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('ignores values that are not finite and is NaN without any', () => {
    expect(median([Number.NaN, 5, Number.NaN])).toBe(5);
    expect(median([Number.NaN])).toBeNaN();
    expect(median([])).toBeNaN();
  });
});

describe('ratio', () => {
  it('divides, and is NaN when a side is missing or the divisor is zero', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(undefined, 2)).toBeNaN();
    expect(ratio(3, undefined)).toBeNaN();
    expect(ratio(3, 0)).toBeNaN();
    expect(ratio(Number.NaN, 2)).toBeNaN();
  });
});
