import type { WindowResult } from '../measure/window.js';

/** A measurement window with plausible figures, overridden where a spec cares. */
export function windowOf(target: string, concurrency: number, round: number, figures: Partial<WindowResult> = {}): WindowResult {
  return {
    target,
    variant: 'echo',
    concurrency,
    round,
    calls: 1000,
    failures: 0,
    failureSamples: [],
    callsPerSec: 1000,
    p50Ms: 1,
    p90Ms: 2,
    p99Ms: 3,
    cpuUsPerCall: 100,
    peakRssMb: 50,
    gatewayPeakRssMb: Number.NaN,
    ...figures,
  };
}
