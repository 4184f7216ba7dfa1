import { AuditQuery, type AuditStats } from '@switchboard/audit';
import { inReadSnapshot, withAuditReader } from './audit-reader.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage } from './command-args.js';
import { FILTER_OPTIONS, parseFilters } from './filters.js';
import { formatTable } from './text-table.js';

const OPTIONS = { ...COMMON_OPTIONS, ...FILTER_OPTIONS, json: { type: 'boolean' } } as const;

/** `audit stats`: totals, then calls, errors and denials per tool and per principal. */
export async function run(args: string[], usage: string): Promise<number> {
  const { values } = parseCommandArgs(args, OPTIONS);
  if (values.help) return printUsage(usage);
  const filter = parseFilters(values);
  // One snapshot, so the totals and the two tables count the same rows.
  const stats = await withAuditReader(loadCommandConfig(values), (dataSource) =>
    inReadSnapshot(dataSource, () => new AuditQuery(dataSource).stats(filter)),
  );
  process.stdout.write(values.json ? `${JSON.stringify(stats, null, 2)}\n` : formatStats(stats));
  return 0;
}

export function formatStats(stats: AuditStats): string {
  const totals = `${stats.rows} rows: ${stats.calls} tool calls, ${stats.errors} errors, ${stats.denials} denials\n`;
  const tools = formatTable(
    ['TOOL', 'UPSTREAM', 'CALLS', 'ERRORS', 'DENIALS'],
    stats.byTool.map((t) => [t.tool ?? '-', t.upstream ?? '-', t.calls, t.errors, t.denials]),
  );
  const principals = formatTable(
    ['PRINCIPAL', 'CALLS', 'ERRORS', 'DENIALS'],
    stats.byPrincipal.map((p) => [p.principal, p.calls, p.errors, p.denials]),
  );
  return `${totals}\n${tools}\n${principals}`;
}
