import { median } from '../stats.js';
import { medianDifference, perRoundRatios } from './aggregate.js';
import type { WindowResult } from './window.js';

/** A window of the audit scenario: `target` is the audit configuration's id. */
export interface AuditWindow extends WindowResult {
  /** Rows committed to audit_record between the start and the end of the measured loop. */
  auditRows: number;
  /** auditRows over the same interval; NaN with the audit log off (there is no database). */
  auditRowsPerSec: number;
  /** Rows per group commit in the window, from the daemon's /readyz; NaN with the log off. */
  rowsPerCommit: number;
  /**
   * Event-loop time the daemon spent in commits per committed row, µs (its /readyz commitMs):
   * the writer's own cost in place, which moves far less between runs than CPU per call does.
   */
  commitUsPerRow: number;
}

/** What the audit log costs one configuration, next to a reference configuration, at one C. */
export interface AuditCost {
  /** Median of the per-round ratios of CPU per call. */
  cpuRatio: number;
  /** The lowest and highest of those per-round ratios: how far one round strays. */
  cpuRatioRange: [number, number];
  /** Median of the per-round differences of CPU per call, µs. */
  cpuDeltaUs: number;
  /** Median of the per-round differences of p50, ms. */
  p50DeltaMs: number;
}

export function auditCost(windows: readonly AuditWindow[], config: string, reference: string, concurrency: number): AuditCost {
  const ratios = perRoundRatios(windows, config, reference, 'echo', concurrency, 'cpuUsPerCall');
  const measured = ratios.filter(Number.isFinite);
  return {
    cpuRatio: median(ratios),
    cpuRatioRange: measured.length > 0 ? [Math.min(...measured), Math.max(...measured)] : [Number.NaN, Number.NaN],
    cpuDeltaUs: medianDifference(windows, config, reference, 'echo', concurrency, 'cpuUsPerCall'),
    p50DeltaMs: medianDifference(windows, config, reference, 'echo', concurrency, 'p50Ms'),
  };
}

/** One line of the audit table: medians over rounds of one configuration at one C. */
export interface AuditSummaryRow {
  config: string;
  concurrency: number;
  rounds: number;
  calls: number;
  failures: number;
  failureSamples: string[];
  callsPerSec: number;
  auditRowsPerSec: number;
  rowsPerCommit: number;
  commitUsPerRow: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerCall: number;
  /** Against the configuration with the audit log off. */
  vsOff: AuditCost;
}

/** Rows in C order, then in configOrder; reference is the configuration every vsOff compares with. */
export function summarizeAudit(
  windows: readonly AuditWindow[],
  configOrder: readonly string[],
  reference: string,
): AuditSummaryRow[] {
  const levels = [...new Set(windows.map((window) => window.concurrency))].sort((a, b) => a - b);
  const rows: AuditSummaryRow[] = [];
  for (const concurrency of levels) {
    for (const config of configOrder) {
      const mine = windows.filter((w) => w.target === config && w.concurrency === concurrency);
      if (mine.length === 0) continue;
      const medianOf = (pick: (w: AuditWindow) => number) => median(mine.map(pick));
      rows.push({
        config,
        concurrency,
        rounds: mine.length,
        calls: mine.reduce((sum, w) => sum + w.calls, 0),
        failures: mine.reduce((sum, w) => sum + w.failures, 0),
        failureSamples: [...new Set(mine.flatMap((w) => w.failureSamples))].slice(0, 3),
        callsPerSec: medianOf((w) => w.callsPerSec),
        auditRowsPerSec: medianOf((w) => w.auditRowsPerSec),
        rowsPerCommit: medianOf((w) => w.rowsPerCommit),
        commitUsPerRow: medianOf((w) => w.commitUsPerRow),
        p50Ms: medianOf((w) => w.p50Ms),
        p99Ms: medianOf((w) => w.p99Ms),
        cpuUsPerCall: medianOf((w) => w.cpuUsPerCall),
        vsOff: auditCost(windows, config, reference, concurrency),
      });
    }
  }
  return rows;
}
