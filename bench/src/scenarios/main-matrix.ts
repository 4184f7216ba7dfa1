import { toolCall } from '../load/jsonrpc.js';
import { measureWindow, type WindowResult } from '../measure/window.js';
import type { BenchOptions } from '../options.js';
import { processTree, rssKbOf } from '../proc-stats.js';
import { errorText, progress, rotate } from '../progress.js';
import type { Target } from '../targets/target.js';

export interface IdleRss {
  target: string;
  /** Serving processes and their descendants, MiB. */
  servingMb: number;
  /** The gateway process alone, MiB; undefined for a bare upstream. */
  gatewayMb: number | undefined;
}

/** RSS of every target before any load (after start-up and tool discovery). */
export function measureIdleRss(targets: readonly Target[]): IdleRss[] {
  return targets.map((target) => ({
    target: target.name,
    servingMb: rssKbOf(processTree(target.servingRoots)) / 1024,
    gatewayMb: target.gatewayPid === undefined ? undefined : rssKbOf([target.gatewayPid]) / 1024,
  }));
}

export interface MatrixResult {
  windows: WindowResult[];
  /** Windows that could not run at all (e.g. a target died), as messages. */
  errors: string[];
}

/**
 * The main matrix: tools/call echo, closed loop. Rounds are interleaved (round ->
 * concurrency -> target) and the target order rotates per slot, so slow drift of a
 * shared machine spreads over all targets instead of landing on whichever runs last.
 */
export async function runMainMatrix(targets: readonly Target[], options: BenchOptions): Promise<MatrixResult> {
  const windows: WindowResult[] = [];
  const errors: string[] = [];
  let slot = 0;
  for (let round = 1; round <= options.rounds; round++) {
    for (const concurrency of options.concurrency) {
      for (const target of rotate(targets, slot++)) {
        const label = `round ${round}/${options.rounds} C=${concurrency} ${target.name}`;
        await recordWindow(label, windows, errors, () =>
          measureWindow(target, echoWindow(target, concurrency, round, options)),
        );
      }
    }
  }
  return { windows, errors };
}

/** Runs one window and keeps its result, or the reason it could not run; never throws. */
/** The window every echo measurement uses: the main matrix's and the audit scenario's. */
export function echoWindow(target: Target, concurrency: number, round: number, options: Pick<BenchOptions, 'warmupS' | 'durationS'>) {
  return {
    variant: 'echo',
    request: toolCall(target.tools.echo, { text: 'hello from the bench' }),
    concurrency,
    warmupS: options.warmupS,
    durationS: options.durationS,
    round,
  };
}

export async function recordWindow<W extends WindowResult>(
  label: string,
  windows: W[],
  errors: string[],
  measure: () => Promise<W>,
  describe: (result: W) => string = describeWindow,
): Promise<void> {
  try {
    const result = await measure();
    windows.push(result);
    progress(`${label}: ${describe(result)}`);
  } catch (error) {
    errors.push(`${label}: ${errorText(error)}`);
    progress(`${label}: FAILED ${errorText(error)}`);
  }
}

export function describeWindow(result: WindowResult): string {
  const failed = result.failures > 0 ? `, ${result.failures} FAILED (${result.failureSamples[0] ?? ''})` : '';
  return (
    `${Math.round(result.callsPerSec)} calls/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, ` +
    `CPU ${Math.round(result.cpuUsPerCall)} µs/call, peak RSS ${result.peakRssMb.toFixed(0)} MiB${failed}`
  );
}
