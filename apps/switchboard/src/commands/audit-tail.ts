import { setTimeout as sleep } from 'node:timers/promises';
import { auditRowJson } from '@switchboard/audit';
import { AuditQuery, type AuditFilter, type AuditRow } from '@switchboard/audit';
import { withAuditReader } from './audit-reader.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage } from './command-args.js';
import { CommandError, usageError } from './command-error.js';
import { FILTER_OPTIONS, parseFilters } from './filters.js';
import { ChunkedOutput, OutputError, isBrokenPipe } from './output.js';
import { formatRowLine } from './row-line.js';

const OPTIONS = {
  ...COMMON_OPTIONS,
  ...FILTER_OPTIONS,
  lines: { type: 'string', short: 'n', default: '20' },
  follow: { type: 'boolean', short: 'f' },
  json: { type: 'boolean' },
} as const;

const POLL_MS = 500;
const MAX_LINES = 100_000;

/** `audit tail`: the newest rows, oldest first; with -f, new rows as they are committed. */
export async function run(args: string[], usage: string): Promise<number> {
  const { values } = parseCommandArgs(args, OPTIONS);
  if (values.help) return printUsage(usage);
  const count = Number(values.lines);
  if (!/^\d+$/.test(values.lines) || count < 1 || count > MAX_LINES) {
    throw usageError(`-n '${values.lines}': expected a number of rows from 1 to ${MAX_LINES}`);
  }
  const filter = parseFilters(values);
  const format = values.json ? (row: AuditRow) => JSON.stringify(auditRowJson(row)) : formatRowLine;
  const out = new ChunkedOutput(process.stdout);
  const print = async (rows: AsyncIterable<AuditRow> | AuditRow[]) => {
    for await (const row of rows) await out.write(`${format(row)}\n`);
    await out.flush();
  };

  return withAuditReader(loadCommandConfig(values), async (dataSource) => {
    const query = new AuditQuery(dataSource);
    try {
      // The newest id overall, read first: following from it misses nothing committed after.
      const head = (await query.page({}, { limit: 1, order: 'desc' })).items[0]?.id ?? 0;
      await print(query.last({ ...filter, beforeId: head + 1 }, count));
      if (values.follow) await follow(query, filter, head, print);
    } catch (err) {
      if (isBrokenPipe(err)) return 0;
      if (err instanceof OutputError) throw new CommandError(`writing to stdout failed: ${err.message}`);
      throw err;
    }
    return 0;
  });
}

/** Polls for rows after `lastId` until SIGINT or SIGTERM. */
async function follow(
  query: AuditQuery,
  filter: AuditFilter,
  lastId: number,
  print: (rows: AsyncIterable<AuditRow>) => Promise<void>,
): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    while (!stop.signal.aborted) {
      // Rows are filtered but the cursor follows every id, so a skipped row is not re-read.
      const head = (await query.page({ afterId: lastId }, { limit: 1, order: 'desc' })).items[0]?.id ?? lastId;
      if (head > lastId) await print(query.rows({ ...filter, afterId: lastId, beforeId: head + 1 }));
      lastId = head;
      await sleep(POLL_MS, undefined, { signal: stop.signal }).catch(() => undefined);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
