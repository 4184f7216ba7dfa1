import type { MachineInfo } from './machine-info.js';
import type { AggregateRow, Cell } from './measure/aggregate.js';
import type { WindowResult } from './measure/window.js';
import { formatMb, formatMs, formatRate, formatUs, table } from './markdown.js';
import type { BenchOptions } from './options.js';
import { renderAudit } from './report-audit.js';
import { renderPolicy } from './report-policy.js';
import type { AuditResult } from './scenarios/audit.js';
import type { PolicyResult } from './scenarios/policy.js';
import type { IdleSessionsResult } from './scenarios/idle-sessions.js';
import type { IdleRss } from './scenarios/main-matrix.js';
import { IDLE_READING_MS, type ToolsListResult } from './scenarios/tools-list.js';
import { formatRatio, type CheckResult } from './target-checks.js';

/** Everything one run measured; written as .bench/latest.json and rendered as markdown. */
export interface BenchReport {
  machine: MachineInfo;
  options: BenchOptions;
  wallSeconds: number;
  /** Load average when the report was written; compare with the one at start. */
  loadAverageEnd: number[];
  /** The Node flags the daemon ran with: those of `npm start`. */
  switchboardNodeFlags: string[];
  startErrors: string[];
  idleRss: IdleRss[];
  main: { windows: WindowResult[]; rows: AggregateRow[]; errors: string[] };
  toolsList?: ToolsListResult | { error: string };
  payload?: { windows: WindowResult[]; rows: AggregateRow[]; errors: string[] };
  idleSessions?: IdleSessionsResult[];
  audit: AuditResult;
  policy?: PolicyResult;
  checks: CheckResult[];
  strays: string[];
}

export function renderReport(report: BenchReport): string {
  const { machine, options } = report;
  const out: string[] = [];
  out.push('# Switchboard benchmark', '');
  out.push(
    `- Date: ${machine.date}; commit ${machine.commit}`,
    `- Machine: Node ${machine.node}, ${machine.cpuModel}, ${machine.cores} cores, load average at start ${machine.loadAverage.join(' / ')}, at end ${report.loadAverageEnd.join(' / ')}`,
    `- Parameters: ${options.rounds} rounds x ${options.durationS} s windows (+${options.warmupS} s warm-up), ` +
      `C = ${options.concurrency.join(', ')}; targets ${options.targets.join(', ')}` +
      (options.skipExtras
        ? '; extras skipped'
        : `; payload windows ${options.payloadDurationS} s; ${options.listIterations} list walks; ${options.idleSessions} idle sessions; ` +
          `audit writer windows ${options.writerDurationS} s`) +
      (options.quick ? ' (--quick)' : ''),
    `- Wall time: ${formatSeconds(report.wallSeconds)}`,
    `- Switchboard is started as \`npm start\` starts it: \`node ${[...report.switchboardNodeFlags, 'bin/switchboard.js start'].join(' ')}\``,
    '- The Switchboard targets run with the default audit log (strict, synchronous normal: a row in the journal before each tools/call is answered); the audit section measures the other settings.',
    '- Ratios (×) are relative to direct-http at the same C: the median over rounds of the per-round ratios. ' +
      'Lower is better, except calls/s. CPU is the serving processes’ utime+stime (all descendants) per call. Memory in MiB.',
    '',
  );
  const totalFailures = [...report.main.rows, ...(report.payload?.rows ?? []), ...(report.audit.daemon?.rows ?? [])].reduce(
    (sum, row) => sum + row.failures,
    0,
  );
  if (totalFailures > 0) out.push(`> ⚠ **${totalFailures} calls failed** during measurement windows; see the failed column and Failures below.`, '');
  for (const error of report.startErrors) out.push(`> ⚠ target did not start: ${error}`, '');

  out.push(`## Main matrix: tools/call echo, closed loop (median of ${options.rounds} round${options.rounds === 1 ? '' : 's'})`, '');
  out.push(
    table(
      ['C', 'target', 'calls/s', 'p50 ms', 'p90 ms', 'p99 ms', 'CPU µs/call', 'peak RSS MiB', 'gateway alone peak MiB', 'failed'],
      report.main.rows.map((row) => [
        String(row.concurrency),
        row.target,
        cell(row.metrics.callsPerSec, formatRate),
        cell(row.metrics.p50Ms, formatMs),
        cell(row.metrics.p90Ms, formatMs),
        cell(row.metrics.p99Ms, formatMs),
        cell(row.metrics.cpuUsPerCall, formatUs),
        cell(row.metrics.peakRssMb, formatMb),
        formatMb(row.metrics.gatewayPeakRssMb.value),
        failedCell(row),
      ]),
    ),
    '',
  );

  out.push('### Idle RSS (after start-up, before the first window)', '');
  const baseIdle = report.idleRss.find((row) => row.target === 'direct-http')?.servingMb;
  out.push(
    table(
      ['target', 'serving processes MiB', '× direct-http', 'gateway process alone MiB'],
      report.idleRss.map((row) => [
        row.target,
        formatMb(row.servingMb),
        baseIdle ? formatRatio(row.servingMb / baseIdle) : '–',
        row.gatewayMb === undefined ? '–' : formatMb(row.gatewayMb),
      ]),
    ),
    '',
  );

  if (report.toolsList) out.push(...renderToolsList(report.toolsList));
  if (report.payload) {
    out.push('## Payload: tools/call payload (1 round)', '');
    out.push(
      table(
        ['size', 'C', 'target', 'calls/s', 'p50 ms', 'p99 ms', 'CPU µs/call', 'peak RSS MiB', 'failed'],
        report.payload.rows.map((row) => [
          row.variant,
          String(row.concurrency),
          row.target,
          cell(row.metrics.callsPerSec, formatRate),
          cell(row.metrics.p50Ms, formatMs),
          cell(row.metrics.p99Ms, formatMs),
          cell(row.metrics.cpuUsPerCall, formatUs),
          cell(row.metrics.peakRssMb, formatMb),
          failedCell(row),
        ]),
      ),
      '',
    );
  }
  if (report.idleSessions) {
    out.push('## Idle sessions (fresh instance each)', '');
    out.push(
      table(
        ['target', 'sessions', 'process before MiB', 'process after MiB', 'with children before MiB', 'with children after MiB', 'KiB/session'],
        report.idleSessions.map((row) =>
          row.error
            ? [row.target, String(row.sessions), `failed: ${row.error}`, '', '', '', '']
            : [
                row.target,
                String(row.sessions),
                formatMb(row.processBeforeMb),
                formatMb(row.processAfterMb),
                formatMb(row.treeBeforeMb),
                formatMb(row.treeAfterMb),
                row.perSessionKb.toFixed(1),
              ],
        ),
      ),
      '',
    );
  }

  out.push(...renderAudit(report.audit));
  out.push(...renderPolicy(report.policy));

  out.push('## Targets', '');
  out.push(table(['', 'target', 'measured', 'verdict'], report.checks.map((check) => [check.id, check.goal, check.measured, verdictText(check)])), '');

  const failures = [...report.main.rows, ...(report.payload?.rows ?? [])].filter((row) => row.failures > 0);
  const errors = [...report.main.errors, ...(report.payload?.errors ?? [])];
  if (failures.length > 0 || errors.length > 0) {
    out.push('## Failures', '');
    for (const row of failures) {
      out.push(`- ${row.target} ${row.variant} C=${row.concurrency}: ${row.failures} of ${row.calls} calls failed: ${row.failureSamples.join(' | ')}`);
    }
    for (const error of errors) out.push(`- window not run: ${error}`);
    out.push('');
  }
  if (report.strays.length > 0) out.push(`> ⚠ processes left running after the bench (killed): ${report.strays.join(', ')}`, '');
  return out.join('\n');
}

function renderToolsList(result: ToolsListResult | { error: string }): string[] {
  const out = ['## Merged tools/list (C=1)', ''];
  if ('error' in result) return [...out, `Failed: ${result.error}`, ''];
  const rows = [
    [
      `Switchboard, ${result.upstreams} stdio upstreams: full walk (${result.tools} tools, ${result.pages} pages)`,
      formatMs(result.walk.p50),
      formatMs(result.walk.p90),
      formatMs(result.walk.p99),
    ],
    ['Switchboard: one page', formatMs(result.page.p50), formatMs(result.page.p90), formatMs(result.page.p99)],
  ];
  if (result.direct) {
    rows.push([
      `direct-http, one upstream with ${result.direct.tools} tools (one page)`,
      formatMs(result.direct.summary.p50),
      formatMs(result.direct.summary.p90),
      formatMs(result.direct.summary.p99),
    ]);
  }
  out.push(table(['listing', 'p50 ms', 'p90 ms', 'p99 ms'], rows), '');
  out.push(
    `${result.iterations} walks${result.failures ? `, **${result.failures} failed**` : ''}. ` +
      `Idle RSS of this daemon, ${IDLE_READING_MS / 1000} s after its last request: ${formatMb(result.daemonIdleRssMb)} MiB alone, ${formatMb(result.daemonTreeIdleRssMb)} MiB with its ${result.upstreams} upstreams.`,
    '',
  );
  return out;
}

function cell(value: Cell, format: (n: number) => string): string {
  return `${format(value.value)} (${formatRatio(value.ratio)})`;
}

function failedCell(row: AggregateRow): string {
  return row.failures > 0 ? `**${row.failures}**` : '0';
}

function verdictText(check: CheckResult): string {
  return check.verdict === 'MISS' ? '**MISS**' : check.verdict;
}

function formatSeconds(seconds: number): string {
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}
