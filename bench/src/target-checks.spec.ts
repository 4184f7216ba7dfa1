import { describe, expect, it } from 'vitest';
import { windowOf } from './testing/windows.js';
import { evaluateTargets, type CheckResult } from './target-checks.js';

const byId = (checks: CheckResult[]) => Object.fromEntries(checks.map((check) => [check.id, check]));

describe('evaluateTargets', () => {
  const good = [1, 16, 64].flatMap((c) => [
    windowOf('direct-http', c, 1, { cpuUsPerCall: 200, p50Ms: 1, p99Ms: 4, callsPerSec: 1000 }),
    windowOf('switchboard-stdio', c, 1, { cpuUsPerCall: 180, p50Ms: 1.2, p99Ms: 3, callsPerSec: 1100 }),
    windowOf('mcp-proxy', c, 1, { cpuUsPerCall: 400, p50Ms: 2, p99Ms: 8, callsPerSec: 500 }),
  ]);

  it('passes every target when the figures meet them', () => {
    const checks = byId(
      evaluateTargets({
        windows: good,
        concurrency: [1, 16, 64],
        listing: { walkP50Ms: 3.2, daemonIdleRssMb: 95, tools: 1000 },
        idleSessions: { sessions: 1000, perSessionKb: 20 },
      }),
    );
    expect(Object.values(checks).map((check) => `${check.id} ${check.verdict}`)).toEqual([
      'a PASS',
      'b PASS',
      'c PASS',
      'd PASS',
      'e PASS',
      'f PASS',
      'g PASS',
    ]);
    expect(checks['a']!.measured).toBe('0.90×');
    expect(checks['g']!.measured).toContain('19.5 MiB per 1,000');
  });

  it('misses at the boundaries the targets exclude', () => {
    const windows = good.map((w) =>
      w.target === 'switchboard-stdio'
        ? { ...w, cpuUsPerCall: 201, p50Ms: 1.26, callsPerSec: 999, p99Ms: w.concurrency === 64 ? 8 : 3 }
        : w,
    );
    const checks = byId(
      evaluateTargets({
        windows,
        concurrency: [1, 16, 64],
        listing: { walkP50Ms: 5, daemonIdleRssMb: 120, tools: 1000 },
        idleSessions: { sessions: 200, perSessionKb: 60 },
      }),
    );
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) expect(checks[id]!.verdict, id).toBe('MISS');
    expect(checks['g']!.measured).toContain('extrapolated from 200');
  });

  it('passes exactly at the inclusive limits', () => {
    const windows = good.map((w) => (w.target === 'switchboard-stdio' ? { ...w, cpuUsPerCall: 200, p50Ms: 1.25, callsPerSec: 1000 } : w));
    const checks = byId(evaluateTargets({ windows, concurrency: [1, 16, 64] }));
    expect([checks['a']!.verdict, checks['b']!.verdict, checks['c']!.verdict]).toEqual(['PASS', 'PASS', 'PASS']);
  });

  it('reports n/a for what was not measured and flags failed calls', () => {
    const windows = [windowOf('direct-http', 16, 1), windowOf('switchboard-stdio', 16, 1, { failures: 5 })];
    const checks = byId(evaluateTargets({ windows, concurrency: [16] }));
    expect(checks['a']!.measured).toContain('5 failed calls');
    expect(checks['b']!.verdict).toBe('n/a');
    expect(checks['d']!.verdict).toBe('n/a');
    expect(checks['e']!.verdict).toBe('n/a');
    expect(checks['g']!.verdict).toBe('n/a');
  });
});
