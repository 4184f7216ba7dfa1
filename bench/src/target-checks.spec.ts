import { describe, expect, it } from 'vitest';
import type { AuditWindow } from './measure/audit-cost.js';
import { windowOf } from './testing/windows.js';
import { evaluateTargets, type CheckResult } from './target-checks.js';

const byId = (checks: CheckResult[]) => Object.fromEntries(checks.map((check) => [check.id, check]));

describe('evaluateTargets', () => {
  const good = [1, 16, 64].flatMap((c) => [
    windowOf('direct-http', c, 1, { cpuUsPerCall: 200, p50Ms: 1, p99Ms: 4, callsPerSec: 1000 }),
    windowOf('switchboard-stdio', c, 1, { cpuUsPerCall: 180, p50Ms: 1.2, p99Ms: 3, callsPerSec: 1100 }),
    windowOf('mcp-proxy', c, 1, { cpuUsPerCall: 400, p50Ms: 2, p99Ms: 8, callsPerSec: 500 }),
  ]);

  const audit = (config: string, round: number, figures: Partial<AuditWindow>): AuditWindow => ({
    ...windowOf(config, 16, round),
    auditRows: 0,
    auditRowsPerSec: Number.NaN,
    rowsPerCommit: Number.NaN,
    commitUsPerRow: Number.NaN,
    ...figures,
  });
  // Per-round: strict-normal (the default) costs 1.05×, 1.10×, 1.30× of off (median 1.10×) and +0.1, +0.5, +2 ms of p50 (median 0.5).
  const auditWindows = [
    audit('off', 1, { cpuUsPerCall: 100, p50Ms: 1 }),
    audit('off', 2, { cpuUsPerCall: 100, p50Ms: 1 }),
    audit('off', 3, { cpuUsPerCall: 100, p50Ms: 1 }),
    audit('relaxed', 1, { cpuUsPerCall: 100, p50Ms: 1 }),
    audit('strict-normal', 1, { cpuUsPerCall: 105, p50Ms: 1.1 }),
    audit('strict-normal', 2, { cpuUsPerCall: 110, p50Ms: 1.5 }),
    audit('strict-normal', 3, { cpuUsPerCall: 130, p50Ms: 3 }),
  ];

  it('passes every target when the figures meet them', () => {
    const checks = byId(
      evaluateTargets({
        windows: good,
        concurrency: [1, 16, 64],
        listing: { walkP50Ms: 3.2, daemonIdleRssMb: 95, tools: 1000 },
        idleSessions: { sessions: 1000, perSessionKb: 20 },
        audit: auditWindows,
        policy: [
          { ...windowOf('no-policy', 16, 1), cpuUsPerCall: 100 },
          { ...windowOf('policy-200', 16, 1), cpuUsPerCall: 104.9 },
        ],
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
      'h PASS',
      'i PASS',
      'j PASS',
    ]);
    expect(checks['j']!.measured).toBe('1.05×');
    expect(checks['a']!.measured).toBe('0.90×');
    expect(checks['h']!.measured).toBe(
      '1.10× (+10 µs/call; rounds 1.05–1.30) vs off; 1.05× (+5 µs/call; rounds 1.05–1.05) vs relaxed (for information)',
    );
    expect(checks['i']!.measured).toBe('+0.50 ms vs off; +0.10 ms vs relaxed (for information)');
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
        audit: auditWindows.map((w) => (w.target === 'strict-normal' ? { ...w, cpuUsPerCall: w.cpuUsPerCall + 1, p50Ms: w.p50Ms + 0.01 } : w)),
      }),
    );
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']) expect(checks[id]!.verdict, id).toBe('MISS');
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
    expect(checks['h']!.verdict).toBe('n/a');
    expect(checks['i']!.measured).toBe('not measured');
  });

  it('judges the audit log against off only, and flags failed calls there', () => {
    const withoutOff = auditWindows.filter((w) => w.target !== 'off');
    expect(byId(evaluateTargets({ windows: [], concurrency: [16], audit: withoutOff }))['h']!.verdict).toBe('n/a');
    const failing = auditWindows.map((w) => (w.target === 'off' ? { ...w, failures: 2 } : w));
    expect(byId(evaluateTargets({ windows: [], concurrency: [16], audit: failing }))['i']!.measured).toContain('6 failed calls');
  });
});
