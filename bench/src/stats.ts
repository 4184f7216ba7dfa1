/** Order statistics for latencies and for the per-round figures. */

/** Nearest-rank percentile of an ascending array: the smallest value with at least p% of the samples at or below it. */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (p <= 0) return sorted[0]!;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
}

export function latencySummary(latenciesMs: Float64Array | readonly number[]): LatencySummary {
  // A typed array sorts numerically (Array.prototype.sort would compare as strings).
  const sorted = Float64Array.from(latenciesMs).sort();
  return { p50: percentileOfSorted(sorted, 50), p90: percentileOfSorted(sorted, 90), p99: percentileOfSorted(sorted, 99) };
}

/** Median of the finite values (the mean of the middle two for an even count); NaN when there are none. */
export function median(values: readonly number[]): number {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 === 1 ? finite[mid]! : (finite[mid - 1]! + finite[mid]!) / 2;
}

/** a / b, NaN when either is missing or b is zero. */
export function ratio(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return Number.NaN;
  return a / b;
}

/** a - b, NaN when either is missing. */
export function difference(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b)) return Number.NaN;
  return a - b;
}
