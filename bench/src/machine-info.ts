import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';

export interface MachineInfo {
  date: string;
  node: string;
  cpuModel: string;
  cores: number;
  /** 1, 5 and 15 minute load averages when the bench started: a busy machine explains noisy figures. */
  loadAverage: number[];
  commit: string;
}

export function machineInfo(repoRoot: string): MachineInfo {
  const cpuList = cpus();
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
    cores: cpuList.length,
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
    commit: gitCommit(repoRoot),
  };
}

function gitCommit(repoRoot: string): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: repoRoot, encoding: 'utf8' }).trim() !== '';
    // Uncommitted changes are part of what was measured, so say so.
    return dirty ? `${head} + uncommitted changes` : head;
  } catch {
    return 'unknown';
  }
}
