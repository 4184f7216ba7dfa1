import { describe, expect, it } from 'vitest';
import { parseStatLine, parseVmRssKb, treeOf, type ProcStat } from './proc-stats.js';

// Field layout of /proc/<pid>/stat (proc(5)): pid (comm) state ppid pgrp session tty_nr tpgid
// flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice num_threads
// itrealvalue starttime vsize rss ...
function statLine(pid: number, comm: string, ppid: number, utime: number, stime: number, start = 5000): string {
  return `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194560 1200 0 0 0 ${utime} ${stime} 7 8 20 0 11 0 ${start} 1234567 4321 18446744073709551615`;
}

describe('parseStatLine', () => {
  it('reads pid, comm, state, ppid, utime + stime and the start time', () => {
    expect(parseStatLine(statLine(42, 'node', 1, 150, 25))).toEqual({
      pid: 42,
      comm: 'node',
      state: 'S',
      ppid: 1,
      cpuTicks: 175,
      startTicks: 5000,
    });
  });

  it('copes with a comm holding spaces and parentheses', () => {
    const parsed = parseStatLine(statLine(7, 'weird ) name (x)', 3, 10, 5));
    expect(parsed.comm).toBe('weird ) name (x)');
    expect(parsed.ppid).toBe(3);
    expect(parsed.cpuTicks).toBe(15);
  });

  it('ignores cutime/cstime (children are summed by walking the tree instead)', () => {
    const line = statLine(9, 'sh', 1, 1, 2).replace(' 7 8 20 ', ' 700 800 20 ');
    expect(parseStatLine(line).cpuTicks).toBe(3);
  });

  it('rejects something that is not a stat line', () => {
    expect(() => parseStatLine('garbage')).toThrow(/not a \/proc stat line/);
  });
});

describe('parseVmRssKb', () => {
  it('reads VmRSS in kB', () => {
    expect(parseVmRssKb('Name:\tnode\nVmPeak:\t  999 kB\nVmRSS:\t   51234 kB\nThreads:\t11\n')).toBe(51234);
  });

  it('is undefined when there is no VmRSS (kernel threads, zombies)', () => {
    expect(parseVmRssKb('Name:\tkthreadd\nState:\tS (sleeping)\n')).toBeUndefined();
  });
});

describe('treeOf', () => {
  const stat = (pid: number, ppid: number): ProcStat => ({ pid, ppid, comm: 'x', state: 'S', cpuTicks: 0, startTicks: 0 });
  const all = [stat(1, 0), stat(10, 1), stat(11, 10), stat(12, 11), stat(13, 10), stat(20, 1), stat(21, 20)];

  it('finds all descendants of the roots', () => {
    expect(treeOf([10], all).sort((a, b) => a - b)).toEqual([10, 11, 12, 13]);
    expect(treeOf([11, 20], all).sort((a, b) => a - b)).toEqual([11, 12, 20, 21]);
  });

  it('keeps a root that has no children', () => {
    expect(treeOf([13], all)).toEqual([13]);
  });
});
