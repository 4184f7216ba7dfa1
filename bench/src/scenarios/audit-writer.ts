import { dirname, join } from 'node:path';
import { AUDIT_ENTITIES, AuditWriter, committerFor, journalFor, type AuditEntry, type AuditMode } from '@switchboard/audit';
import { MIGRATIONS } from '@switchboard/migrations';
import { silentLogger } from '@switchboard/observability';
import { DATABASE_FILE, migrate, openDatabase, sqliteConnection, type SyncMode } from '@switchboard/persistence';
import { errorText, progress } from '../progress.js';

export interface WriterCase {
  mode: AuditMode;
  synchronous: SyncMode;
  /** Concurrent appenders, each with one row in flight, like one host session each. */
  appenders: number;
}

export const WRITER_CASES: readonly WriterCase[] = [16, 64].flatMap((appenders) => [
  { mode: 'strict', synchronous: 'normal', appenders },
  { mode: 'strict', synchronous: 'full', appenders },
  { mode: 'relaxed', synchronous: 'normal', appenders },
]);

/** The daemon's default; only relaxed mode waits for it. */
const FLUSH_MS = 200;
const WARMUP_S = 0.5;

export interface WriterThroughput extends WriterCase {
  rows: number;
  seconds: number;
  rowsPerSec: number;
  commitsPerSec: number;
  rowsPerCommit: number;
  /** CPU of this process (user + system) per committed row, µs: redaction aside, all the writer does. */
  cpuUsPerRow: number;
  error?: string;
}

/**
 * The audit writer alone, in this process, on a fresh migrated file per case: how many
 * rows a second it commits when nothing else competes for the event loop. The ceiling
 * of the audit log, independent of the network and of the relay.
 */
export async function runWriterThroughput(workDir: string, durationS: number): Promise<WriterThroughput[]> {
  const results: WriterThroughput[] = [];
  for (const writerCase of WRITER_CASES) {
    const label = `audit writer ${caseLabel(writerCase)}`;
    try {
      const result = await measureWriter(join(workDir, `audit-writer-${results.length}`, DATABASE_FILE), writerCase, durationS);
      results.push(result);
      progress(
        `${label}: ${Math.round(result.rowsPerSec)} rows/s, ${Math.round(result.commitsPerSec)} commits/s ` +
          `(${result.rowsPerCommit.toFixed(1)} rows each), CPU ${result.cpuUsPerRow.toFixed(1)} µs/row`,
      );
    } catch (error) {
      progress(`${label}: FAILED ${errorText(error)}`);
      const nan = Number.NaN;
      const figures = { rows: 0, seconds: nan, rowsPerSec: nan, commitsPerSec: nan, rowsPerCommit: nan, cpuUsPerRow: nan };
      results.push({ ...writerCase, ...figures, error: errorText(error) });
    }
  }
  return results;
}

function caseLabel(writerCase: WriterCase): string {
  return `${writerCase.mode}, synchronous ${writerCase.synchronous}, ${writerCase.appenders} appenders`;
}

async function measureWriter(file: string, writerCase: WriterCase, durationS: number): Promise<WriterThroughput> {
  const dataSource = await openDatabase({ file, entities: AUDIT_ENTITIES, migrations: MIGRATIONS, synchronous: writerCase.synchronous });
  try {
    await migrate(dataSource);
    // The daemon's committer for this setting: on this thread for normal, a worker thread for
    // full (process.cpuUsage counts every thread); and its journal, for strict on normal.
    const committer = committerFor(sqliteConnection(dataSource), { file, synchronous: writerCase.synchronous, busyTimeoutMs: 100 });
    const writer = new AuditWriter(committer, {
      mode: writerCase.mode,
      flushMs: FLUSH_MS,
      maxQueuedRows: 1_000_000,
      logger: silentLogger(),
      journal: journalFor(writerCase, join(dirname(file), 'audit-journal')),
    });
    try {
      await appendFor(writer, writerCase.appenders, WARMUP_S);
      const before = writer.status();
      const cpuBefore = process.cpuUsage();
      const started = process.hrtime.bigint();
      await appendFor(writer, writerCase.appenders, durationS);
      // Relaxed rows still queued are committed now and counted: the time of that commit is in the window too.
      await writer.flush();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const cpu = process.cpuUsage(cpuBefore);
      const after = writer.status();
      if (after.lostRows > 0 || !after.writable) throw new Error(`writer failed: ${after.failure ?? `${after.lostRows} rows lost`}`);
      const rows = after.committedRows - before.committedRows;
      const commits = after.commits - before.commits;
      return {
        ...writerCase,
        rows,
        seconds,
        rowsPerSec: rows / seconds,
        commitsPerSec: commits / seconds,
        rowsPerCommit: rows / commits,
        cpuUsPerRow: (cpu.user + cpu.system) / rows,
      };
    } finally {
      await writer.close();
    }
  } finally {
    await dataSource.destroy();
  }
}

/** Strict: `appenders` loops, each appending a row and awaiting its commit. Relaxed: see appendRelaxed. */
function appendFor(writer: AuditWriter, appenders: number, seconds: number): Promise<void> {
  const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  if (writer.mode === 'relaxed') return appendRelaxed(writer, appenders, deadline);
  const appender = async (worker: number) => {
    for (let seq = 0; process.hrtime.bigint() < deadline; seq++) await writer.append(benchEntry(worker, seq));
  };
  return Promise.all(Array.from({ length: appenders }, (_, worker) => appender(worker))).then(() => undefined);
}

/**
 * Relaxed: append resolves at once, so rows come in bursts of `appenders`, one burst per
 * turn of the event loop, as the daemon's requests arrive in one I/O phase. One driver
 * appends the burst and only then re-arms: the writer's commit is queued ahead of it.
 */
const MAX_WAITING_ROWS = 20_000;

function appendRelaxed(writer: AuditWriter, appenders: number, deadline: bigint): Promise<void> {
  return new Promise((resolve, reject) => {
    let seq = 0;
    const burst = () => {
      // The writer commits slower than a loop that only appends; a real daemon is paced by
      // its calls. Holding off while many rows wait measures what the writer sustains
      // instead of how fast its queue overflows.
      if (writer.status().queuedRows > MAX_WAITING_ROWS) {
        if (process.hrtime.bigint() < deadline) setTimeout(burst, 1);
        else resolve();
        return;
      }
      try {
        for (let worker = 0; worker < appenders; worker++) void writer.append(benchEntry(worker, seq));
        seq++;
      } catch (error) {
        return reject(error);
      }
      if (process.hrtime.bigint() < deadline) setImmediate(burst);
      else resolve();
    };
    burst();
  });
}

/** A row like the daemon writes for the bench's echo call (the relay's redaction and digest are not part of this). */
function benchEntry(worker: number, seq: number): AuditEntry {
  return {
    at: Date.now(),
    principal: 'local',
    authMethod: 'loopback',
    sessionId: `bench-session-${worker}`,
    transport: 'streamable-http',
    clientName: 'switchboard-bench',
    clientVersion: '0.1.0',
    protocolVersion: '2025-06-18',
    upstream: 'bench',
    method: 'tools/call',
    name: 'bench__echo',
    originalName: 'echo',
    arguments: '{"text":"hello from the bench"}',
    argumentsTruncated: false,
    argumentsDigest: 'sha256:6f1c2e0b9d8a7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b',
    decision: 'allowed',
    rule: 'default-allow',
    outcome: 'ok',
    errorCode: null,
    errorMessage: null,
    latencyMs: 0.4,
    responseBytes: 97,
    requestId: String(seq),
    traceId: null,
  };
}
