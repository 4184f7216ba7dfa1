import { checkpointLine, readNewestRow } from '@switchboard/audit';
import { sqliteConnection } from '@switchboard/persistence';
import { withAuditReader } from './audit-reader.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage } from './command-args.js';
import { CommandError } from './command-error.js';

/** What `audit checkpoint` reads of its arguments; bad usage throws. */
export const readArguments = (args: string[]) => parseCommandArgs(args, COMMON_OPTIONS);

/**
 * `audit checkpoint`: the checkpoint line of the log's newest row, for an operator to keep
 * somewhere the database's writers cannot reach (a ticket, remote storage from cron), and
 * give to `audit verify --checkpoint` later.
 */
export async function run(args: string[], usage: string): Promise<number> {
  const { values } = readArguments(args);
  if (values.help) return printUsage(usage);
  const head = await withAuditReader(loadCommandConfig(values), async (dataSource) => readNewestRow(sqliteConnection(dataSource)));
  if (!head) throw new CommandError('the audit log has no rows: there is no row to name in a checkpoint yet');
  process.stdout.write(`${checkpointLine(head)}\n`);
  return 0;
}
