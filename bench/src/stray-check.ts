import { readAllStats, readStat, treeOf, type ProcStat } from './proc-stats.js';

/**
 * Finds processes the bench left behind. A gateway's upstream children are re-parented
 * when the gateway dies, so walking our own tree at the end would miss exactly the
 * strays that matter; instead every serving tree is remembered while it runs (pid and
 * start time, so a recycled pid is not mistaken for a stray) and looked up at the end.
 */
const remembered = new Map<number, ProcStat>();

export function rememberTree(roots: readonly number[]): void {
  const all = readAllStats();
  const byPid = new Map(all.map((stat) => [stat.pid, stat]));
  for (const pid of treeOf(roots, all)) {
    const stat = byPid.get(pid);
    if (stat) remembered.set(pid, stat);
  }
}

/** Remembered processes that still run. */
export function strayProcesses(): ProcStat[] {
  const strays: ProcStat[] = [];
  for (const [pid, then] of remembered) {
    if (pid === process.pid) continue;
    const now = readStat(pid);
    // A zombie waits only for its parent to reap it; it holds no resources worth reporting.
    if (now && now.startTicks === then.startTicks && now.state !== 'Z') strays.push(now);
  }
  return strays;
}

/** SIGKILLs the given strays; returns how many it could signal. */
export function killStrays(strays: readonly ProcStat[]): number {
  let killed = 0;
  for (const stray of strays) {
    try {
      process.kill(stray.pid, 'SIGKILL');
      killed++;
    } catch {
      // already gone
    }
  }
  return killed;
}
