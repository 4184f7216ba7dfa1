import { join } from 'node:path';
import { DATABASE_FILE } from '@switchboard/persistence';
import { runClosedLoop } from '../load/closed-loop.js';
import { summarizeAudit, type AuditSummaryRow, type AuditWindow } from '../measure/audit-cost.js';
import { AuditRowCounter } from '../measure/audit-rows.js';
import { measureWindow } from '../measure/window.js';
import type { BenchOptions } from '../options.js';
import { errorText, progress, rotate } from '../progress.js';
import { rememberTree } from '../stray-check.js';
import { startTarget, switchboardDataDir, targetLabel, type StartContext } from '../targets/start-targets.js';
import type { Target } from '../targets/target.js';
import { runWriterThroughput, type WriterThroughput } from './audit-writer.js';
import { AUDIT_CONCURRENCY, AUDIT_CONFIGS, AUDIT_OFF, type AuditConfig } from './audit-configs.js';
import { describeWindow, echoWindow, recordWindow } from './main-matrix.js';

export interface AuditResult {
  /** What was not measured, and why. */
  skipped?: string;
  /** switchboard-stdio in each configuration, under the main matrix's load (tools/call echo, closed loop). */
  daemon?: { rounds: number; windows: AuditWindow[]; rows: AuditSummaryRow[]; errors: string[] };
  /** The writer alone, in-process. */
  writer?: WriterThroughput[];
}

/**
 * What the audit log costs: the same daemon as the main matrix's switchboard-stdio, once
 * per audit configuration and round, measured in interleaved rounds like the main matrix; rows
 * committed per second are counted in each daemon's database next to its calls per second.
 * Then the writer alone. An extra: --skip-extras skips it, and the daemon part needs
 * switchboard-stdio among --targets.
 */
export async function runAuditScenario(context: StartContext, options: BenchOptions): Promise<AuditResult> {
  if (options.skipExtras) return { skipped: 'skipped (--skip-extras)' };
  const result: AuditResult = {};
  if (options.targets.includes('switchboard-stdio')) result.daemon = await runDaemonAudit(context, options);
  else result.skipped = 'through the daemon: not measured (switchboard-stdio is not among --targets)';
  result.writer = await runWriterThroughput(context.workDir, options.writerDurationS);
  return result;
}

interface AuditDaemon {
  config: AuditConfig;
  target: Target;
  /** undefined with the audit log off. */
  counter: AuditRowCounter | undefined;
}

/** Unrecorded load on a freshly started daemon before its first window: JIT, SQLite's cache and the WAL settle. */
const FRESH_WARMUP_S = 2;
/** The level the targets are judged at warms every daemon, whatever levels follow. */
const WARMUP_CONCURRENCY = 16;

async function runDaemonAudit(context: StartContext, options: BenchOptions): Promise<NonNullable<AuditResult['daemon']>> {
  const windows: AuditWindow[] = [];
  const errors: string[] = [];
  const rounds = options.auditRounds;
  let slot = 0;
  for (let round = 1; round <= rounds; round++) {
    // Fresh daemons every round, started in a rotated order. A daemon keeps whatever
    // advantage it starts with (its place in the start order, its memory layout) for its
    // whole life: 5-7% between two identical daemons in runs here, the same in every
    // round, where a median over rounds cannot remove it. New daemons make it noise that can.
    const daemons: AuditDaemon[] = [];
    try {
      progress(`audit round ${round}/${rounds}: starting switchboard-stdio in ${AUDIT_CONFIGS.length} audit configurations`);
      for (const config of rotate(AUDIT_CONFIGS, round - 1)) {
        try {
          daemons.push(await startAuditDaemon(config, context, round));
        } catch (error) {
          errors.push(`audit ${config.id} (round ${round}) did not start: ${errorText(error)}`);
          progress(`audit ${config.id}: FAILED to start: ${errorText(error)}`);
        }
      }
      for (const concurrency of AUDIT_CONCURRENCY) {
        for (const daemon of rotate(daemons, slot++)) {
          const label = `audit round ${round}/${rounds} C=${concurrency} ${daemon.config.id}`;
          await recordWindow(label, windows, errors, () => measureAuditWindow(daemon, concurrency, round, options), describeAuditWindow);
        }
      }
    } finally {
      for (const daemon of daemons) daemon.counter?.close();
      await Promise.allSettled(daemons.map((daemon) => daemon.target.stop()));
    }
  }
  const rows = summarizeAudit(windows, AUDIT_CONFIGS.map((config) => config.id), AUDIT_OFF);
  return { rounds, windows, rows, errors };
}

async function startAuditDaemon(config: AuditConfig, context: StartContext, round: number): Promise<AuditDaemon> {
  const suffix = `-audit-${config.id}-r${round}`;
  const target = await startTarget('switchboard-stdio', context, suffix, { audit: config.audit });
  rememberTree(target.servingRoots);
  const file = join(switchboardDataDir(targetLabel('switchboard-stdio', suffix), context), DATABASE_FILE);
  // With the log off the database still exists (API keys live there), but holds no rows to count.
  const logOff = 'enabled' in config.audit && config.audit.enabled === false;
  const counter = logOff ? undefined : AuditRowCounter.open(file);
  if (!logOff && counter === undefined) {
    await target.stop();
    throw new Error(`no audit database at ${file}`);
  }
  try {
    const { request } = echoWindow(target, WARMUP_CONCURRENCY, round, { warmupS: 0, durationS: FRESH_WARMUP_S });
    await runClosedLoop(await target.callers(WARMUP_CONCURRENCY), request, FRESH_WARMUP_S * 1000, false);
  } catch (error) {
    counter?.close();
    await target.stop();
    throw error;
  }
  return { config, target, counter };
}

async function measureAuditWindow(daemon: AuditDaemon, concurrency: number, round: number, options: BenchOptions): Promise<AuditWindow> {
  const { counter, target } = daemon;
  const readyz = new URL('/readyz', target.url);
  let rowsBefore = 0;
  let rowsAfter = 0;
  let started = 0n;
  let ended = 0n;
  let writerBefore: WriterCounters | undefined;
  let writerAfter: WriterCounters | undefined;
  const result = await measureWindow(target, {
    ...echoWindow(target, concurrency, round, options),
    atStart: async () => {
      writerBefore = await writerCounters(readyz);
      rowsBefore = counter?.rows() ?? 0;
      started = process.hrtime.bigint();
    },
    atEnd: async () => {
      ended = process.hrtime.bigint();
      rowsAfter = counter?.rows() ?? 0;
      writerAfter = await writerCounters(readyz);
    },
  });
  const auditRows = rowsAfter - rowsBefore;
  const seconds = Number(ended - started) / 1e9;
  return {
    ...result,
    target: daemon.config.id,
    auditRows,
    auditRowsPerSec: counter ? auditRows / seconds : Number.NaN,
    ...writerFigures(writerBefore, writerAfter),
  };
}

/** Rows per commit and commit time per row between two readings of the writer's counters; NaN without them (log off). */
function writerFigures(
  before: WriterCounters | undefined,
  after: WriterCounters | undefined,
): Pick<AuditWindow, 'rowsPerCommit' | 'commitUsPerRow'> {
  if (!before || !after) return { rowsPerCommit: Number.NaN, commitUsPerRow: Number.NaN };
  const committed = after.committedRows - before.committedRows;
  return {
    rowsPerCommit: committed / (after.commits - before.commits),
    commitUsPerRow: ((after.commitMs - before.commitMs) * 1000) / committed,
  };
}

interface WriterCounters {
  committedRows: number;
  commits: number;
  commitMs: number;
}

/** The audit writer's counters as the daemon's /readyz reports them; undefined with the log off. */
async function writerCounters(readyz: URL): Promise<WriterCounters | undefined> {
  const response = await fetch(readyz);
  const body = (await response.json()) as { audit?: Partial<WriterCounters> };
  const { committedRows, commits, commitMs } = body.audit ?? {};
  return typeof committedRows === 'number' && typeof commits === 'number' && typeof commitMs === 'number'
    ? { committedRows, commits, commitMs }
    : undefined;
}

function describeAuditWindow(result: AuditWindow): string {
  const rows = Number.isFinite(result.auditRowsPerSec)
    ? `${Math.round(result.auditRowsPerSec)} audit rows/s, ${result.rowsPerCommit.toFixed(1)} per commit, ` +
      `${result.commitUsPerRow.toFixed(1)} µs of commit per row`
    : 'no audit rows';
  return `${describeWindow(result)}; ${rows}`;
}
