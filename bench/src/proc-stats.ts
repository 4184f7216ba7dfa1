import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time and memory of process trees, read from /proc (Linux only). CPU comes
 * from the OS rather than from the processes themselves, so a gateway and its
 * children are measured the same way as a plain upstream.
 */

export interface ProcStat {
  pid: number;
  comm: string;
  /** R, S, D, Z, ... (field 3). */
  state: string;
  ppid: number;
  /** utime + stime, clock ticks (stat fields 14 and 15). */
  cpuTicks: number;
  /** Start time after boot, clock ticks (field 22): tells a process from a later one reusing its pid. */
  startTicks: number;
}

/**
 * Parses one /proc/<pid>/stat line. comm (field 2) is in parentheses and may itself
 * contain spaces and parentheses, so the fields after it are found from the last ')'.
 */
export function parseStatLine(line: string): ProcStat {
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open === -1 || close < open) throw new Error(`not a /proc stat line: ${line.slice(0, 80)}`);
  const pid = Number(line.slice(0, open).trim());
  const comm = line.slice(open + 1, close);
  // rest[0] is field 3 (state), so field n is rest[n - 3].
  const rest = line.slice(close + 2).split(' ');
  const ppid = Number(rest[4 - 3]);
  const utime = Number(rest[14 - 3]);
  const stime = Number(rest[15 - 3]);
  const startTicks = Number(rest[22 - 3]);
  if (![pid, ppid, utime, stime, startTicks].every(Number.isFinite)) {
    throw new Error(`malformed /proc stat line: ${line.slice(0, 80)}`);
  }
  return { pid, comm, state: rest[0] ?? '', ppid, cpuTicks: utime + stime, startTicks };
}

/** VmRSS in KiB from a /proc/<pid>/status text; undefined for kernel threads and zombies. */
export function parseVmRssKb(status: string): number | undefined {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return match ? Number(match[1]) : undefined;
}

/** roots and all their descendants present in stats (by ppid), roots first. */
export function treeOf(roots: readonly number[], stats: readonly ProcStat[]): number[] {
  const children = new Map<number, number[]>();
  for (const { pid, ppid } of stats) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const seen = new Set<number>();
  const queue = [...roots];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return [...seen];
}

export function readStat(pid: number): ProcStat | undefined {
  try {
    return parseStatLine(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined; // gone since it was listed
  }
}

export function readAllStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) stats.push(stat);
  }
  return stats;
}

/** The living processes of the trees under roots. */
export function processTree(roots: readonly number[]): number[] {
  return treeOf(roots, readAllStats());
}

let ticksPerSecond: number | undefined;

/** USER_HZ, the unit of the stat CPU fields (almost always 100). */
export function clockTicksPerSecond(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return ticksPerSecond;
}

/** CPU ticks per pid, for a delta across a window. */
export type CpuSnapshot = Map<number, number>;

export function cpuSnapshot(roots: readonly number[]): CpuSnapshot {
  const snapshot: CpuSnapshot = new Map();
  const all = readAllStats();
  const byPid = new Map(all.map((stat) => [stat.pid, stat]));
  for (const pid of treeOf(roots, all)) {
    const stat = byPid.get(pid);
    if (stat) snapshot.set(pid, stat.cpuTicks);
  }
  return snapshot;
}

/** CPU seconds spent between two snapshots; a process born in between counts from zero. */
export function cpuSecondsBetween(before: CpuSnapshot, after: CpuSnapshot): number {
  let ticks = 0;
  for (const [pid, now] of after) ticks += now - (before.get(pid) ?? 0);
  return ticks / clockTicksPerSecond();
}

/** Summed VmRSS of the given processes, KiB. */
export function rssKbOf(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += parseVmRssKb(readFileSync(`/proc/${pid}/status`, 'utf8')) ?? 0;
    } catch {
      // gone
    }
  }
  return total;
}

/**
 * Samples the summed RSS of a fixed set of processes every intervalMs and keeps the
 * peak, and that of the gateway process alone. The set is walked once at the start:
 * re-walking all of /proc ten times a second would cost the client CPU the measured
 * processes compete for.
 */
export class PeakRssSampler {
  private peakKb = 0;
  private gatewayPeakKb = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pids: readonly number[],
    private readonly gatewayPid: number | undefined,
    intervalMs = 100,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  /** Peaks in KiB; gatewayKb is NaN without a gateway. */
  stop(): { treeKb: number; gatewayKb: number } {
    clearInterval(this.timer);
    this.sample();
    return { treeKb: this.peakKb, gatewayKb: this.gatewayPid === undefined ? Number.NaN : this.gatewayPeakKb };
  }

  private sample(): void {
    this.peakKb = Math.max(this.peakKb, rssKbOf(this.pids));
    if (this.gatewayPid !== undefined) this.gatewayPeakKb = Math.max(this.gatewayPeakKb, rssKbOf([this.gatewayPid]));
  }
}
