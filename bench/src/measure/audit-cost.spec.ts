import { describe, expect, it } from 'vitest';
import { windowOf } from '../testing/windows.js';
import { auditCost, summarizeAudit, type AuditWindow } from './audit-cost.js';

function auditWindow(config: string, concurrency: number, round: number, figures: Partial<AuditWindow> = {}): AuditWindow {
  return { ...windowOf(config, concurrency, round), auditRows: 3000, auditRowsPerSec: 1000, rowsPerCommit: 4, commitUsPerRow: 9, ...figures };
}

describe('auditCost', () => {
  it('pairs the rounds: ratio of CPU per call, differences of CPU and p50', () => {
    const windows = [
      auditWindow('off', 16, 1, { cpuUsPerCall: 100, p50Ms: 1 }),
      auditWindow('off', 16, 2, { cpuUsPerCall: 200, p50Ms: 3 }), // a slow round for everyone
      auditWindow('off', 16, 3, { cpuUsPerCall: 100, p50Ms: 1 }),
      auditWindow('strict-full', 16, 1, { cpuUsPerCall: 105, p50Ms: 1.1 }),
      auditWindow('strict-full', 16, 2, { cpuUsPerCall: 216, p50Ms: 3.4 }),
      auditWindow('strict-full', 16, 3, { cpuUsPerCall: 120, p50Ms: 1.2 }),
    ];
    const cost = auditCost(windows, 'strict-full', 'off', 16);
    expect(cost.cpuRatio).toBeCloseTo(1.08); // median of 1.05, 1.08, 1.20
    expect(cost.cpuDeltaUs).toBeCloseTo(16); // median of 5, 16, 20
    expect(cost.p50DeltaMs).toBeCloseTo(0.2); // median of 0.1, 0.4, 0.2
    expect(cost.cpuRatioRange[0]).toBeCloseTo(1.05); // the spread of those rounds
    expect(cost.cpuRatioRange[1]).toBeCloseTo(1.2);
  });

  it('is NaN where the reference was not measured', () => {
    const cost = auditCost([auditWindow('strict-full', 16, 1)], 'strict-full', 'off', 16);
    expect(cost.cpuRatio).toBeNaN();
    expect(cost.cpuRatioRange).toEqual([Number.NaN, Number.NaN]);
    expect(cost.p50DeltaMs).toBeNaN();
  });
});

describe('summarizeAudit', () => {
  it('gives one row per C and configuration, in the given order, with medians and the cost against off', () => {
    const windows = [
      auditWindow('strict-full', 16, 1, { auditRowsPerSec: 900, callsPerSec: 900, failures: 1, failureSamples: ['x'] }),
      auditWindow('off', 16, 1, { auditRowsPerSec: Number.NaN, p50Ms: 1 }),
      auditWindow('strict-full', 16, 2, { auditRowsPerSec: 1100, callsPerSec: 1100 }),
      auditWindow('off', 16, 2, { auditRowsPerSec: Number.NaN, p50Ms: 1 }),
      auditWindow('off', 1, 1),
    ];
    const rows = summarizeAudit(windows, ['off', 'relaxed', 'strict-full'], 'off');
    expect(rows.map((row) => `${row.concurrency} ${row.config}`)).toEqual(['1 off', '16 off', '16 strict-full']);
    const strict = rows[2]!;
    expect(strict.auditRowsPerSec).toBe(1000);
    expect(strict.callsPerSec).toBe(1000);
    expect(strict.failures).toBe(1);
    expect(strict.vsOff.cpuRatio).toBe(1);
    expect(rows[1]!.auditRowsPerSec).toBeNaN();
  });
});
