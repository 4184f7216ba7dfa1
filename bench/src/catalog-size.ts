/**
 * `node bench/dist/catalog-size.js`: what one upstream's long list costs the daemon. For
 * each size it starts `switchboard start` (as npm start does) over the bulk fixture
 * upstream listing that many tools (or resources), and reports how long until a host sees
 * the whole merged list, how long a host's full tools/list walk and its first page take
 * then, and the daemon's RSS at peak and idle. A measurement script, not a test
 * (docs/performance.md#catalog-size).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bulkFixturePath } from '@switchboard/testing';
import { HttpSessionPool } from './load/http-load.js';
import { rpc, type McpCaller } from './load/jsonrpc.js';
import { PeakRssSampler, rssKbOf } from './proc-stats.js';
import { progress, sleep } from './progress.js';
import { REPO_ROOT, startSwitchboard, type StartContext } from './targets/start-targets.js';
import { IDLE_READING_MS } from './scenarios/tools-list.js';

const USAGE = `usage: node bench/dist/catalog-size.js [--sizes 0,1000,10000] [--kind tools|resources]
  [--description-bytes 40] [--page-size 1000] [--expect-at-most N] [--config JSON]
--expect-at-most: the count a host sees once the list is in (a cap); default: the size.
--config: top-level keys merged into the daemon's config (e.g. '{"lists":{"maxItems":5000}}').`;

const WALKS = 5;
const READY_TIMEOUT_MS = 600_000;

interface Row {
  size: number;
  seen: number;
  readyMs: number;
  walkMs: number;
  firstPageMs: number;
  peakRssMb: number;
  idleRssMb: number;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '0,1000,10000,100000' },
      kind: { type: 'string', default: 'tools' },
      'description-bytes': { type: 'string', default: '40' },
      'page-size': { type: 'string', default: '1000' },
      'expect-at-most': { type: 'string' },
      config: { type: 'string', default: '{}' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || (values.kind !== 'tools' && values.kind !== 'resources')) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const kind = values.kind;
  const sizes = values.sizes.split(',').map(Number);
  const cap = values['expect-at-most'] === undefined ? Infinity : Number(values['expect-at-most']);
  const overrides = JSON.parse(values.config) as Record<string, unknown>;
  mkdirSync(join(REPO_ROOT, '.bench'), { recursive: true });
  const context: StartContext = { workDir: mkdtempSync(join(REPO_ROOT, '.bench', 'catalog-')) };
  const rows: Row[] = [];
  try {
    for (const size of sizes) {
      const env = {
        [kind === 'tools' ? 'BULK_TOOLS' : 'BULK_RESOURCES']: String(size),
        BULK_PAGE_SIZE: values['page-size'],
        BULK_DESCRIPTION_BYTES: values['description-bytes'],
      };
      rows.push(await measure(context, kind, size, Math.min(size, cap), env, overrides));
      const row = rows.at(-1)!;
      progress(`${size} ${kind}: seen ${row.seen}, ready ${row.readyMs} ms, walk ${row.walkMs} ms, peak ${row.peakRssMb} MiB, idle ${row.idleRssMb} MiB`);
    }
  } finally {
    rmSync(context.workDir, { recursive: true, force: true });
  }
  process.stdout.write(
    `| ${kind} listed | a host sees | until a host sees them, ms | full ${kind}/list walk, ms | first page, ms | daemon peak RSS, MiB | daemon idle RSS, MiB |\n` +
      '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n' +
      rows
        .map((r) => `| ${r.size.toLocaleString('en')} | ${r.seen.toLocaleString('en')} | ${r.readyMs} | ${r.walkMs} | ${r.firstPageMs} | ${r.peakRssMb} | ${r.idleRssMb} |`)
        .join('\n') +
      '\n',
  );
  return 0;
}

async function measure(
  context: StartContext,
  kind: 'tools' | 'resources',
  size: number,
  expected: number,
  env: Record<string, string>,
  overrides: Record<string, unknown>,
): Promise<Row> {
  const started = performance.now();
  const daemon = await startSwitchboard(`n${size}`, context, { bulk: { command: process.execPath, args: [bulkFixturePath()], env } }, overrides);
  const sampler = new PeakRssSampler([daemon.process.pid], daemon.process.pid, 50);
  const pool = new HttpSessionPool(new URL(daemon.url));
  try {
    const [caller] = await pool.callers(1);
    let seen = 0;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while ((seen = (await walk(caller!, kind)).count) < expected) {
      if (Date.now() > deadline) throw new Error(`only ${seen} of ${expected} ${kind} after ${READY_TIMEOUT_MS} ms`);
      await sleep(100);
    }
    const readyMs = Math.round(performance.now() - started);
    const walks: number[] = [];
    const firsts: number[] = [];
    for (let i = 0; i < WALKS; i++) {
      const result = await walk(caller!, kind);
      walks.push(result.ms);
      firsts.push(result.firstPageMs);
    }
    await pool.close();
    await sleep(IDLE_READING_MS);
    const idleRssMb = Math.round(rssKbOf([daemon.process.pid]) / 1024);
    const peakRssMb = Math.round(sampler.stop().gatewayKb / 1024);
    return { size, seen, readyMs, walkMs: median(walks), firstPageMs: median(firsts), peakRssMb, idleRssMb };
  } finally {
    sampler.stop();
    await pool.close().catch(() => undefined);
    await daemon.process.stop();
  }
}

async function walk(caller: McpCaller, kind: 'tools' | 'resources'): Promise<{ count: number; ms: number; firstPageMs: number }> {
  const started = performance.now();
  let firstPageMs = 0;
  let count = 0;
  let cursor: string | undefined;
  do {
    const outcome = await caller.call(rpc(`${kind}/list`, cursor === undefined ? {} : { cursor }));
    if (!outcome.ok) throw new Error(`${kind}/list failed: ${outcome.error}`);
    if (firstPageMs === 0) firstPageMs = performance.now() - started;
    const items = outcome.result[kind];
    if (Array.isArray(items)) count += items.length;
    const next = outcome.result['nextCursor'];
    cursor = typeof next === 'string' && next !== '' ? next : undefined;
  } while (cursor !== undefined);
  return { count, ms: performance.now() - started, firstPageMs };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 10) / 10;
}

process.exitCode = await main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  return 1;
});
