import { HttpSessionPool } from '../load/http-load.js';
import { rpc, type McpCaller } from '../load/jsonrpc.js';
import type { BenchOptions } from '../options.js';
import { processTree, rssKbOf } from '../proc-stats.js';
import { progress, sleep } from '../progress.js';
import { latencySummary, type LatencySummary } from '../stats.js';
import { rememberTree } from '../stray-check.js';
import { startHttpUpstream, startSwitchboard, stdioUpstreamEntry, type StartContext } from '../targets/start-targets.js';
import { waitForTools } from '../targets/tool-names.js';

export const LIST_UPSTREAMS = 10;
export const TOOLS_PER_UPSTREAM = 100;
/**
 * How long after its last request the daemon's idle RSS is read: past its idle collection
 * (5 s without requests, apps/switchboard/src/idle-gc.ts), which gives back what start-up and
 * the listings left behind. Idle is how a background daemon spends most of its life.
 */
export const IDLE_READING_MS = 6000;

export interface ToolsListResult {
  upstreams: number;
  tools: number;
  pages: number;
  iterations: number;
  /** A full walk: tools/list following nextCursor until it is absent. */
  walk: LatencySummary;
  /** One tools/list page. */
  page: LatencySummary;
  failures: number;
  /** The daemon process alone, idle with its upstreams connected (IDLE_READING_MS after its last request), MiB. */
  daemonIdleRssMb: number;
  /** The daemon and all its children (the upstreams), MiB. */
  daemonTreeIdleRssMb: number;
  /** For context: tools/list of one bare upstream with 100 tools over HTTP. */
  direct: { tools: number; summary: LatencySummary } | undefined;
}

/**
 * The merged listing: a Switchboard with 10 stdio upstreams x 100 tools, walked at C=1
 * through one session. Also the daemon's idle RSS in that configuration.
 */
export async function runToolsListScenario(context: StartContext, options: BenchOptions): Promise<ToolsListResult> {
  const servers: Record<string, Record<string, unknown>> = {};
  for (let i = 0; i < LIST_UPSTREAMS; i++) {
    const name = `up${String(i).padStart(2, '0')}`;
    servers[name] = stdioUpstreamEntry({ name, extraTools: TOOLS_PER_UPSTREAM - 2 });
  }
  const expected = LIST_UPSTREAMS * TOOLS_PER_UPSTREAM;
  progress(`tools/list: starting a Switchboard with ${LIST_UPSTREAMS} stdio upstreams x ${TOOLS_PER_UPSTREAM} tools`);
  const daemon = await startSwitchboard('tools-list', context, servers);
  const pool = new HttpSessionPool(new URL(daemon.url));
  try {
    const [caller] = await pool.callers(1);
    const listing = await waitForTools(caller!, ({ names }) => names.length >= expected, 60_000);
    rememberTree([daemon.process.pid]);
    progress(`tools/list: ${listing.names.length} tools in ${listing.pages} pages`);

    const warmup = Math.max(5, Math.round(options.listIterations / 10));
    for (let i = 0; i < warmup; i++) await walk(caller!);
    const walks: number[] = [];
    const pages: number[] = [];
    let failures = 0;
    let pagesPerWalk = 0;
    for (let i = 0; i < options.listIterations; i++) {
      const result = await walk(caller!);
      if (!result.ok) failures++;
      walks.push(result.totalMs);
      pages.push(...result.pageMs);
      pagesPerWalk = result.pageMs.length;
    }
    const walkSummary = latencySummary(walks);
    const pageSummary = latencySummary(pages);
    progress(
      `tools/list: full walk p50 ${walkSummary.p50.toFixed(2)} ms, p99 ${walkSummary.p99.toFixed(2)} ms; ` +
        `page p50 ${pageSummary.p50.toFixed(2)} ms${failures ? `; ${failures} FAILED walks` : ''}`,
    );
    await pool.close();
    // The daemon's last request was the pool's close. Its idle RSS is read IDLE_READING_MS
    // later, once its idle collection has run; the direct listing is measured meanwhile.
    const idleSince = Date.now();
    const direct = await directListing(options.listIterations);
    await sleep(Math.max(0, IDLE_READING_MS - (Date.now() - idleSince)));
    const daemonIdleRssMb = rssKbOf([daemon.process.pid]) / 1024;
    const daemonTreeIdleRssMb = rssKbOf(processTree([daemon.process.pid])) / 1024;
    progress(`tools/list: idle RSS daemon ${daemonIdleRssMb.toFixed(1)} MiB, with children ${daemonTreeIdleRssMb.toFixed(1)} MiB`);
    return {
      upstreams: LIST_UPSTREAMS,
      tools: listing.names.length,
      pages: pagesPerWalk,
      iterations: options.listIterations,
      walk: walkSummary,
      page: pageSummary,
      failures,
      daemonIdleRssMb,
      daemonTreeIdleRssMb,
      direct,
    };
  } finally {
    await pool.close().catch(() => undefined);
    await daemon.process.stop();
  }
}

interface Walk {
  ok: boolean;
  totalMs: number;
  pageMs: number[];
}

async function walk(caller: McpCaller): Promise<Walk> {
  const pageMs: number[] = [];
  const started = process.hrtime.bigint();
  let cursor: string | undefined;
  do {
    const t0 = process.hrtime.bigint();
    const outcome = await caller.call(rpc('tools/list', cursor === undefined ? {} : { cursor }));
    pageMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (!outcome.ok) return { ok: false, totalMs: Number(process.hrtime.bigint() - started) / 1e6, pageMs };
    const next = outcome.result['nextCursor'];
    cursor = typeof next === 'string' && next !== '' ? next : undefined;
  } while (cursor !== undefined);
  return { ok: true, totalMs: Number(process.hrtime.bigint() - started) / 1e6, pageMs };
}

/** tools/list of one bare bench upstream with 100 tools over HTTP (the SDK sends one page). */
async function directListing(iterations: number): Promise<ToolsListResult['direct']> {
  const upstream = await startHttpUpstream('tools-list-direct', { extraTools: TOOLS_PER_UPSTREAM - 2 });
  const pool = new HttpSessionPool(new URL(upstream.url));
  try {
    const [caller] = await pool.callers(1);
    const listing = await waitForTools(caller!, () => true, 10_000);
    for (let i = 0; i < Math.max(5, Math.round(iterations / 10)); i++) await walk(caller!);
    const times: number[] = [];
    for (let i = 0; i < iterations; i++) times.push((await walk(caller!)).totalMs);
    const summary = latencySummary(times);
    progress(`tools/list direct-http (${listing.names.length} tools): p50 ${summary.p50.toFixed(2)} ms`);
    return { tools: listing.names.length, summary };
  } finally {
    await pool.close();
    await upstream.process.stop();
  }
}
