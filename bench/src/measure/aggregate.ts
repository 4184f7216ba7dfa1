import { difference, median, ratio } from '../stats.js';
import type { WindowResult } from './window.js';

export const METRICS = ['callsPerSec', 'p50Ms', 'p90Ms', 'p99Ms', 'cpuUsPerCall', 'peakRssMb', 'gatewayPeakRssMb'] as const;
export type Metric = (typeof METRICS)[number];

/** A figure over rounds: the median value, and its ratio to the reference target. */
export interface Cell {
  value: number;
  /** Median of the per-round ratios (rounds are interleaved, so each round's pair shares conditions). */
  ratio: number;
}

export interface AggregateRow {
  target: string;
  variant: string;
  concurrency: number;
  rounds: number;
  calls: number;
  failures: number;
  failureSamples: string[];
  metrics: Record<Metric, Cell>;
}

const sameSlot = (a: WindowResult, b: WindowResult) =>
  a.variant === b.variant && a.concurrency === b.concurrency && a.round === b.round;

/**
 * Median over rounds of target's metric divided by reference's, pairing the windows of
 * the same round; NaN when either target has no windows there.
 */
export function medianRatio(
  windows: readonly WindowResult[],
  target: string,
  reference: string,
  variant: string,
  concurrency: number,
  metric: Metric,
): number {
  return median(perRound(windows, target, reference, variant, concurrency, metric, ratio));
}

/** As medianRatio, with target's metric minus reference's (e.g. the latency a feature adds, in ms). */
export function medianDifference(
  windows: readonly WindowResult[],
  target: string,
  reference: string,
  variant: string,
  concurrency: number,
  metric: Metric,
): number {
  return median(perRound(windows, target, reference, variant, concurrency, metric, difference));
}

/** Each round's ratio of target's metric to reference's, in round order: the spread behind medianRatio. */
export function perRoundRatios(
  windows: readonly WindowResult[],
  target: string,
  reference: string,
  variant: string,
  concurrency: number,
  metric: Metric,
): number[] {
  return perRound(windows, target, reference, variant, concurrency, metric, ratio);
}

function perRound(
  windows: readonly WindowResult[],
  target: string,
  reference: string,
  variant: string,
  concurrency: number,
  metric: Metric,
  compare: (mine: number, theirs: number | undefined) => number,
): number[] {
  const values: number[] = [];
  for (const mine of windows) {
    if (mine.target !== target || mine.variant !== variant || mine.concurrency !== concurrency) continue;
    const theirs = windows.find((other) => other.target === reference && sameSlot(mine, other));
    values.push(compare(mine[metric], theirs?.[metric]));
  }
  return values;
}

/** One row per target x variant x concurrency, in the order the windows first appear per variant and C. */
export function aggregate(windows: readonly WindowResult[], baseline: string, targetOrder: readonly string[]): AggregateRow[] {
  const variants = [...new Set(windows.map((window) => window.variant))];
  const levels = [...new Set(windows.map((window) => window.concurrency))].sort((a, b) => a - b);
  const rows: AggregateRow[] = [];
  for (const variant of variants) {
    for (const concurrency of levels) {
      for (const target of targetOrder) {
        const mine = windows.filter((w) => w.target === target && w.variant === variant && w.concurrency === concurrency);
        if (mine.length === 0) continue;
        const metrics = {} as Record<Metric, Cell>;
        for (const metric of METRICS) {
          metrics[metric] = {
            value: median(mine.map((window) => window[metric])),
            ratio: medianRatio(windows, target, baseline, variant, concurrency, metric),
          };
        }
        rows.push({
          target,
          variant,
          concurrency,
          rounds: mine.length,
          calls: mine.reduce((sum, window) => sum + window.calls, 0),
          failures: mine.reduce((sum, window) => sum + window.failures, 0),
          failureSamples: [...new Set(mine.flatMap((window) => window.failureSamples))].slice(0, 3),
          metrics,
        });
      }
    }
  }
  return rows;
}

export function findRow(
  rows: readonly AggregateRow[],
  target: string,
  concurrency: number,
  variant = 'echo',
): AggregateRow | undefined {
  return rows.find((row) => row.target === target && row.concurrency === concurrency && row.variant === variant);
}
