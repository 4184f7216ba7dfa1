import { verifyChain, type PruningAccount } from '@switchboard/audit';
import { counted } from '@switchboard/core';
import { inReadSnapshot, withAuditReader } from './audit-reader.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage } from './command-args.js';

/** What `audit verify` reads of its arguments; bad usage throws. */
export const readArguments = (args: string[]) => parseCommandArgs(args, COMMON_OPTIONS);

/** `audit verify`: exit 0 when the hash chain is intact, 1 with the first broken row when not. */
export async function run(args: string[], usage: string): Promise<number> {
  const { values } = readArguments(args);
  if (values.help) return printUsage(usage);
  const verdict = await withAuditReader(
    loadCommandConfig(values),
    (dataSource) => inReadSnapshot(dataSource, () => verifyChain(dataSource)),
    { schemaWarning: false },
  );
  if (verdict.ok) {
    process.stdout.write(
      `ok: ${counted(verdict.rows, 'row')}, chain intact (head ${verdict.headHash}, ${counted(verdict.prunedRows, 'row')} pruned by retention)\n`,
    );
    if (verdict.pruning) process.stdout.write(`${formatPruning(verdict.pruning)}\n`);
    return 0;
  }
  if ('schema' in verdict) {
    process.stdout.write(`BROKEN: ${verdict.reason}\n`);
    return 1;
  }
  if (verdict.anchor) {
    process.stdout.write(`BROKEN before row ${verdict.brokenAt}: ${verdict.reason}\n`);
    return 1;
  }
  process.stdout.write(`BROKEN at row ${verdict.brokenAt}: ${verdict.reason} (${counted(verdict.rows, 'row')} verified before it)\n`);
  return 1;
}

/** The second line of an intact, pruned log: which marker row accounts for the missing rows. */
export function formatPruning(p: PruningAccount): string {
  const cutOff = p.before === undefined ? 'no cut-off recorded' : `cut-off ${new Date(p.before).toISOString()}`;
  const through = p.inProgressThroughId === undefined ? '' : `; a run is still pruning through id ${p.inProgressThroughId}`;
  const legacy = p.format === 'legacy' ? ' (older marker format: its id is matched, it records no hash)' : '';
  return (
    `pruned: rows through id ${p.throughId}, accounted for by the audit/pruned row ${p.markerId} ` +
    `written ${new Date(p.markerAt).toISOString()}, ${cutOff}${through}${legacy}`
  );
}
