import { setTimeout as sleep } from 'node:timers/promises';
import { auditRowJson } from '@switchboard/audit';
import { AuditQuery, type AuditFilter, type AuditRow } from '@switchboard/audit';
import { inReadSnapshot, noteUnmatchedFilters, withAuditReader } from './audit-reader.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage } from './command-args.js';
import { CommandError, usageError } from './command-error.js';
import { FILTER_OPTIONS, parseFilters } from './filters.js';
import { ChunkedOutput, OutputError, isBrokenPipe } from './output.js';
import { afterIdBeyondHead } from './resume-notes.js';
import { formatRowLine } from './row-line.js';

const OPTIONS = {
  ...COMMON_OPTIONS,
  ...FILTER_OPTIONS,
  // No parseArgs default: `-n` with `--after-id` is refused, so whether it was given matters.
  lines: { type: 'string', short: 'n' },
  follow: { type: 'boolean', short: 'f' },
  json: { type: 'boolean' },
} as const;

const POLL_MS = 500;
const DEFAULT_LINES = 20;
const MAX_LINES = 100_000;

/** What `audit tail` reads of its arguments; bad usage throws. */
export function readArguments(args: string[]) {
  const { values } = parseCommandArgs(args, OPTIONS);
  if (values.help) return { values, count: 0, filter: {} };
  const filter = parseFilters(values);
  // A reader resuming from an id needs every row after it; the newest N of them would leave a gap.
  if (values.lines !== undefined && filter.afterId !== undefined) {
    throw usageError('-n/--lines counts back from the newest row, --after-id reads on from a row id: give one of them');
  }
  const lines = values.lines ?? String(DEFAULT_LINES);
  const count = Number(lines);
  if (!/^\d+$/.test(lines) || count < 1 || count > MAX_LINES) {
    throw usageError(`-n/--lines '${lines}': expected a whole number of rows from 1 to ${MAX_LINES}`);
  }
  return { values, count, filter };
}

/**
 * `audit tail`: the newest rows (or with --after-id, every row after that id), oldest first;
 * with -f, new rows as they are committed.
 */
export async function run(args: string[], usage: string): Promise<number> {
  const { values, count, filter } = readArguments(args);
  if (values.help) return printUsage(usage);
  const format = values.json ? (row: AuditRow) => JSON.stringify(auditRowJson(row)) : formatRowLine;
  const out = new ChunkedOutput(process.stdout);
  let printed = 0;
  const print = async (rows: AsyncIterable<AuditRow> | AuditRow[]) => {
    for await (const row of rows) {
      await out.write(`${format(row)}\n`);
      printed++;
    }
    await out.flush();
  };

  // With -f, SIGINT or SIGTERM is how the user ends it: from the start, not only once the
  // newest rows are printed (a Ctrl-C while they print is a normal end, exit 0).
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  if (values.follow) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  try {
    return await withAuditReader(loadCommandConfig(values), async (dataSource) => {
      const query = new AuditQuery(dataSource);
      try {
        // The newest id overall, read first: following from it misses nothing committed after.
        // It and the rows up to it are read in one snapshot: retention pruning while a long
        // tail prints would otherwise cut rows from the middle of what it shows.
        const head = await inReadSnapshot(dataSource, async () => {
          const newest = await query.newestId();
          const upToNewest = { ...filter, beforeId: newest + 1 };
          await print(filter.afterId === undefined ? query.last(upToNewest, count) : query.rows(upToNewest));
          return newest;
        });
        const beyond = afterIdBeyondHead(filter, head);
        if (beyond !== undefined) process.stderr.write(`${beyond}\n`);
        // Before following: a filter that can never match would otherwise wait in silence.
        if (printed === 0) await noteUnmatchedFilters(dataSource, filter);
        if (values.follow) await follow(query, filter, head, print, stop.signal);
      } catch (err) {
        if (isBrokenPipe(err)) return 0;
        if (err instanceof OutputError) throw new CommandError(`writing to stdout failed: ${err.message}`);
        throw err;
      }
      return 0;
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Polls for rows after `lastId` until `stopped` (SIGINT or SIGTERM). */
async function follow(
  query: AuditQuery,
  filter: AuditFilter,
  lastId: number,
  print: (rows: AsyncIterable<AuditRow>) => Promise<void>,
  stopped: AbortSignal,
): Promise<void> {
  while (!stopped.aborted) {
    // Rows are filtered but the cursor follows every id, so a skipped row is not re-read.
    const head = (await query.page({ afterId: lastId }, { limit: 1, order: 'desc' })).items[0]?.id ?? lastId;
    if (head > lastId) await print(query.rows({ ...filter, afterId: lastId, beforeId: head + 1 }));
    lastId = head;
    await sleep(POLL_MS, undefined, { signal: stopped }).catch(() => undefined);
  }
}
