import { verifyChain } from '@switchboard/audit';
import { inReadSnapshot, withAuditReader } from './audit-reader.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage } from './command-args.js';

/** `audit verify`: exit 0 when the hash chain is intact, 1 with the first broken row when not. */
export async function run(args: string[], usage: string): Promise<number> {
  const { values } = parseCommandArgs(args, COMMON_OPTIONS);
  if (values.help) return printUsage(usage);
  const verdict = await withAuditReader(loadCommandConfig(values), (dataSource) =>
    inReadSnapshot(dataSource, () => verifyChain(dataSource)),
  );
  if (verdict.ok) {
    process.stdout.write(
      `ok: ${verdict.rows} rows, chain intact (head ${verdict.headHash}, ${verdict.prunedRows} rows pruned by retention)\n`,
    );
    return 0;
  }
  process.stdout.write(`BROKEN at row ${verdict.brokenAt}: ${verdict.reason} (${verdict.rows} rows verified before it)\n`);
  return 1;
}
