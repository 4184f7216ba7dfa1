import { formatMs, formatRate, formatUs, signed, table } from './markdown.js';
import type { AuditResult } from './scenarios/audit.js';
import { auditConfigLabel } from './scenarios/audit-configs.js';
import { formatRatio } from './target-checks.js';

const DAEMON_COLUMNS = [
  'C', 'audit', 'calls/s', 'audit rows/s', 'rows per commit', 'commit µs/row', 'p50 ms', 'p50 vs off ms', 'p99 ms', 'CPU µs/call', 'CPU × off', 'failed',
];

/** The audit section of the report: the log's cost through the daemon, then the writer alone. */
export function renderAudit(audit: AuditResult): string[] {
  const out: string[] = [];
  const daemon = audit.daemon;
  if (daemon) {
    out.push(
      `## Audit log through the daemon: switchboard-stdio, tools/call echo (median of ${plural(daemon.rounds, 'round')})`,
      '',
      'A daemon per audit configuration, started afresh every round in a rotated order and warmed up for 2 s at C=16, then measured in interleaved windows like the main matrix. ' +
        '“× off” and “p50 vs off” are the medians of the per-round ratios and differences against the daemon with the log off. ' +
        'Audit rows/s counts the rows committed to `audit_record` during the window; it matches calls/s unless the writer lags. ' +
        'Rows per commit: from the writer’s counters in the daemon’s /readyz. ' +
        'Commit µs/row: the event-loop time the daemon spent committing (its /readyz `commitMs`, WAL checkpoints included) per row committed; under `synchronous: full` only the hand-over to the commit thread. ' +
        '“off again (control)” is a second daemon identical to “off”: how far its ratios stray from 1.00× is the noise of this run.',
      '',
      table(
        DAEMON_COLUMNS,
        daemon.rows.map((row) => [
          String(row.concurrency),
          auditConfigLabel(row.config),
          formatRate(row.callsPerSec),
          formatRate(row.auditRowsPerSec),
          Number.isFinite(row.rowsPerCommit) ? row.rowsPerCommit.toFixed(1) : '–',
          Number.isFinite(row.commitUsPerRow) ? row.commitUsPerRow.toFixed(1) : '–',
          formatMs(row.p50Ms),
          signed(row.vsOff.p50DeltaMs, 2),
          formatMs(row.p99Ms),
          formatUs(row.cpuUsPerCall),
          formatRatio(row.vsOff.cpuRatio),
          row.failures > 0 ? `**${row.failures}** (${row.failureSamples.join(' | ')})` : '0',
        ]),
      ),
      '',
    );
    for (const error of daemon.errors) out.push(`- not measured: ${error}`);
    if (daemon.errors.length > 0) out.push('');
  }
  if (audit.writer) {
    out.push(
      '## Audit writer alone (in-process, a fresh database file per case)',
      '',
      'Strict: each appender awaits its row’s release before appending the next (under normal its write to the journal, from which rows are committed like relaxed ones; under full its commit). Relaxed: one row per appender per event-loop turn. ' +
        'Every row is hashed into the chain and inserted with its indexes, by the daemon’s committer for the setting (this thread under normal, a worker thread under full). ' +
        'CPU is this process’s user + system time per row, all threads.',
      '',
      table(
        ['mode', 'synchronous', 'appenders', 'rows/s', 'commits/s', 'rows per commit', 'CPU µs/row'],
        audit.writer.map((row) =>
          row.error
            ? [row.mode, row.synchronous, String(row.appenders), `failed: ${row.error}`, '', '', '']
            : [
                row.mode,
                row.synchronous,
                String(row.appenders),
                formatRate(row.rowsPerSec),
                formatRate(row.commitsPerSec),
                row.rowsPerCommit.toFixed(1),
                row.cpuUsPerRow.toFixed(1),
              ],
        ),
      ),
      '',
    );
  }
  if (audit.skipped) out.push(...(out.length === 0 ? ['## Audit log', ''] : []), `Audit log: ${audit.skipped}.`, '');
  return out;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
