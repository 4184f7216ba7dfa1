import { openIdleSessions } from '../load/http-load.js';
import type { BenchOptions } from '../options.js';
import { processTree, rssKbOf } from '../proc-stats.js';
import { errorText, progress, sleep } from '../progress.js';
import { rememberTree } from '../stray-check.js';
import { startTarget, type StartContext } from '../targets/start-targets.js';
import type { TargetName } from '../targets/target.js';

export const IDLE_SESSION_TARGETS: readonly TargetName[] = ['switchboard-stdio', 'direct-http', 'mcp-proxy'];

/** How long after opening the sessions the second reading is taken (lazy allocations, GC). */
const SETTLE_AFTER_MS = 3000;

export interface IdleSessionsResult {
  target: string;
  sessions: number;
  /** The serving process alone (daemon, mcp-proxy, or the bare upstream), MiB. */
  processBeforeMb: number;
  processAfterMb: number;
  /** The serving processes with their children, MiB. */
  treeBeforeMb: number;
  treeAfterMb: number;
  /** (treeAfter - treeBefore) / sessions, KiB. */
  perSessionKb: number;
  error?: string;
}

/**
 * Memory per idle session: each target gets a fresh instance (load from the main matrix
 * would otherwise blur the reading), then N sessions are opened (initialize +
 * notifications/initialized) and left idle.
 */
export async function runIdleSessionsScenario(
  context: StartContext,
  options: BenchOptions,
  selected: readonly TargetName[],
): Promise<IdleSessionsResult[]> {
  const results: IdleSessionsResult[] = [];
  for (const name of IDLE_SESSION_TARGETS.filter((target) => selected.includes(target))) {
    const sessions = options.idleSessions;
    try {
      const target = await startTarget(name, context, '-idle-sessions');
      try {
        rememberTree(target.servingRoots);
        const processPid = target.gatewayPid ?? target.servingRoots[0]!;
        await sleep(1000);
        const processBefore = rssKbOf([processPid]);
        const treeBefore = rssKbOf(processTree(target.servingRoots));
        const url = target.url;
        if (url === undefined) throw new Error('not an HTTP target');
        const started = Date.now();
        await openIdleSessions(new URL(url), sessions);
        const openedIn = Date.now() - started;
        await sleep(SETTLE_AFTER_MS);
        const processAfter = rssKbOf([processPid]);
        const treeAfter = rssKbOf(processTree(target.servingRoots));
        const result: IdleSessionsResult = {
          target: name,
          sessions,
          processBeforeMb: processBefore / 1024,
          processAfterMb: processAfter / 1024,
          treeBeforeMb: treeBefore / 1024,
          treeAfterMb: treeAfter / 1024,
          perSessionKb: (treeAfter - treeBefore) / sessions,
        };
        results.push(result);
        progress(
          `idle sessions ${name}: ${sessions} opened in ${openedIn} ms; RSS ${result.treeBeforeMb.toFixed(1)} -> ` +
            `${result.treeAfterMb.toFixed(1)} MiB (${result.perSessionKb.toFixed(1)} KiB/session)`,
        );
      } finally {
        await target.stop();
      }
    } catch (error) {
      progress(`idle sessions ${name}: FAILED ${errorText(error)}`);
      results.push({
        target: name,
        sessions,
        processBeforeMb: Number.NaN,
        processAfterMb: Number.NaN,
        treeBeforeMb: Number.NaN,
        treeAfterMb: Number.NaN,
        perSessionKb: Number.NaN,
        error: errorText(error),
      });
    }
  }
  return results;
}
