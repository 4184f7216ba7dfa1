import { runClosedLoop } from '../load/closed-loop.js';
import type { RpcRequest } from '../load/jsonrpc.js';
import { cpuSecondsBetween, cpuSnapshot, PeakRssSampler, processTree } from '../proc-stats.js';
import { latencySummary } from '../stats.js';
import type { Target } from '../targets/target.js';

/** The figures of one measurement window (one target, one concurrency, one round). */
export interface WindowResult {
  target: string;
  /** What was called: `echo`, or the payload size; windows are compared within one variant. */
  variant: string;
  concurrency: number;
  round: number;
  calls: number;
  failures: number;
  failureSamples: string[];
  callsPerSec: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** CPU time of the serving processes per completed call, microseconds. */
  cpuUsPerCall: number;
  /** Peak summed RSS of the serving processes during the window, MiB. */
  peakRssMb: number;
  /** Peak RSS of the gateway process alone (daemon, mcp-proxy), MiB; NaN for a bare upstream. */
  gatewayPeakRssMb: number;
}

export interface WindowPlan {
  variant: string;
  request: RpcRequest;
  concurrency: number;
  warmupS: number;
  durationS: number;
  round: number;
  /** Awaited right before and right after the measured loop (not around the warm-up), e.g. to read counters. */
  atStart?(): void | Promise<void>;
  atEnd?(): void | Promise<void>;
}

/**
 * Warm-up (not recorded: JIT, socket pools and the gateway's caches settle), then one
 * measured closed-loop window with the serving processes' CPU delta and peak RSS.
 */
export async function measureWindow(target: Target, plan: WindowPlan): Promise<WindowResult> {
  const callers = await target.callers(plan.concurrency);
  if (plan.warmupS > 0) await runClosedLoop(callers, plan.request, plan.warmupS * 1000, false);

  const roots = target.servingRoots;
  const sampler = new PeakRssSampler(processTree(roots), target.gatewayPid);
  const cpuBefore = cpuSnapshot(roots);
  await plan.atStart?.();
  const loop = await runClosedLoop(callers, plan.request, plan.durationS * 1000);
  await plan.atEnd?.();
  const cpuAfter = cpuSnapshot(roots);
  const peakRss = sampler.stop();

  const latency = latencySummary(loop.latenciesMs);
  const cpuSeconds = cpuSecondsBetween(cpuBefore, cpuAfter);
  return {
    target: target.name,
    variant: plan.variant,
    concurrency: plan.concurrency,
    round: plan.round,
    calls: loop.calls,
    failures: loop.failures,
    failureSamples: loop.failureSamples,
    callsPerSec: loop.calls / (loop.elapsedMs / 1000),
    p50Ms: latency.p50,
    p90Ms: latency.p90,
    p99Ms: latency.p99,
    cpuUsPerCall: loop.calls > 0 ? (cpuSeconds * 1e6) / loop.calls : Number.NaN,
    peakRssMb: peakRss.treeKb / 1024,
    gatewayPeakRssMb: peakRss.gatewayKb / 1024,
  };
}
