import { AuditQuery, type AuditStats } from '@switchboard/audit';
import { counted } from '@switchboard/core';
import { inReadSnapshot, noteUnmatchedFilters, withAuditReader } from './audit-reader.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage } from './command-args.js';
import { FILTER_OPTIONS, parseFilters } from './filters.js';
import { formatTable } from './text-table.js';

const OPTIONS = { ...COMMON_OPTIONS, ...FILTER_OPTIONS, json: { type: 'boolean' } } as const;

/** What `audit stats` reads of its arguments; bad usage throws. */
export function readArguments(args: string[]) {
  const { values } = parseCommandArgs(args, OPTIONS);
  return { values, filter: values.help ? {} : parseFilters(values) };
}

/**
 * `audit stats`: every row by decision; tool calls (`tools/call` rows) with their errors and
 * denials (and in total, those their hosts cancelled), in total, per tool and per principal; every row per method. Each line counts one
 * set of rows in all its columns (see AuditStats).
 */
export async function run(args: string[], usage: string): Promise<number> {
  const { values, filter } = readArguments(args);
  if (values.help) return printUsage(usage);
  // One snapshot, so the totals and the tables count the same rows.
  const stats = await withAuditReader(loadCommandConfig(values), async (dataSource) => {
    const counts = await inReadSnapshot(dataSource, () => new AuditQuery(dataSource).stats(filter));
    if (counts.rows === 0) await noteUnmatchedFilters(dataSource, filter);
    return counts;
  });
  process.stdout.write(values.json ? `${JSON.stringify(stats, null, 2)}\n` : formatStats(stats));
  return 0;
}

export function formatStats(stats: AuditStats): string {
  const d = stats.byDecision;
  const rows =
    `${counted(stats.rows, 'row')}: ${d.allowed} allowed, ${d.denied} denied, ${d.limited} limited, ` +
    `${d.unauthenticated} unauthenticated, ${d.refused} refused\n`;
  const calls =
    `${counted(stats.calls, 'tool call')} (tools/call rows): ${counted(stats.errors, 'error')}, ${stats.cancelled} cancelled, ` +
    `${counted(stats.denials, 'denial')} (not let through: denied, limited, unauthenticated or refused)\n`;
  const tools = formatTable(
    ['TOOL', 'UPSTREAM', 'CALLS', 'ERRORS', 'DENIALS'],
    stats.byTool.map((t) => [t.tool ?? '(no name)', t.upstream ?? '-', t.calls, t.errors, t.denials]),
  );
  const principals = formatTable(
    ['PRINCIPAL', 'CALLS', 'ERRORS', 'DENIALS'],
    stats.byPrincipal.map((p) => [p.principal, p.calls, p.errors, p.denials]),
  );
  const methods = formatTable(
    ['METHOD', 'ROWS', 'ERRORS', 'DENIALS'],
    stats.byMethod.map((m) => [m.method, m.rows, m.errors, m.denials]),
  );
  return `${rows}${calls}\n${tools}\n${principals}\n${methods}`;
}
