import { checkCheckpoints, checkpointProblemLines, verifyChain, type CheckpointReport, type PruningAccount } from '@switchboard/audit';
import { AUDIT_RETENTION } from '@switchboard/config';
import { counted, countedBe, durationMs } from '@switchboard/core';
import { sqliteConnection } from '@switchboard/persistence';
import { checkpointsOfFile, readableSize, whereCheckpointsComeFrom, type CheckpointsFileTally } from './audit-checkpoints-file.js';
import { inReadSnapshot, withAuditReader } from './audit-reader.js';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage } from './command-args.js';
import { CommandError } from './command-error.js';

/** What `audit verify` reads of its arguments; bad usage throws. */
export const readArguments = (args: string[]) => parseCommandArgs(args, { ...COMMON_OPTIONS, checkpoint: { type: 'string' } });

/**
 * `audit verify [--checkpoint FILE]`: exit 0 when the hash chain is intact (and every
 * checkpoint in FILE holds), 1 with the first broken row or the checkpoints that fail.
 */
export async function run(args: string[], usage: string): Promise<number> {
  const { values } = readArguments(args);
  if (values.help) return printUsage(usage);
  const config = loadCommandConfig(values);
  const file = values.checkpoint;
  const whereFrom = file === undefined ? '' : whereCheckpointsComeFrom(config.audit, file, values);
  // Before the read snapshot begins (readableSize says why).
  const size = file === undefined ? 0 : await readableSize(file, whereFrom);
  const tally: CheckpointsFileTally = { unreadable: 0 };
  const { verdict, checkpoints } = await withAuditReader(
    config,
    (dataSource) =>
      inReadSnapshot(dataSource, async () => ({
        verdict: await verifyChain(dataSource),
        checkpoints:
          file === undefined
            ? undefined
            : await checkCheckpoints(sqliteConnection(dataSource), checkpointsOfFile(file, size, tally), {
                retentionMs: durationMs(config.audit.retention, AUDIT_RETENTION),
                now: Date.now(),
              }),
      })),
    { schemaWarning: false },
  );
  const chainOk = printVerdict(verdict);
  if (!checkpoints) return chainOk ? 0 : 1;
  if (tally.unreadable > 0) {
    process.stderr.write(`warning: in ${file}, ${countedBe(tally.unreadable, 'checkpoint tag', 'present')} not a readable v1 checkpoint where one is read (a line's start, or the daemon's 'audit: checkpoint' message); skipped\n`);
  }
  // A file with none is the wrong file, or none was written yet: passing it would vouch for nothing.
  if (checkpoints.checked === 0) throw new CommandError(`no checkpoint in ${file} yet. ${whereFrom}`);
  const problems = checkpointProblemLines(checkpoints, config.audit.retention);
  for (const line of problems) process.stdout.write(`${line}\n`);
  if (problems.length === 0) process.stdout.write(`${formatCheckpoints(checkpoints)}\n`);
  return chainOk && problems.length === 0 ? 0 : 1;
}

/** Prints the chain's verdict; true when it is intact. */
function printVerdict(verdict: Awaited<ReturnType<typeof verifyChain>>): boolean {
  if (verdict.ok) {
    process.stdout.write(
      `ok: ${counted(verdict.rows, 'row')}, chain intact (head ${verdict.headHash}, ${counted(verdict.prunedRows, 'row')} pruned by retention)\n`,
    );
    if (verdict.pruning) process.stdout.write(`${formatPruning(verdict.pruning)}\n`);
    return true;
  }
  if ('schema' in verdict) process.stdout.write(`BROKEN: ${verdict.reason}\n`);
  else if (verdict.anchor) process.stdout.write(`BROKEN before row ${verdict.brokenAt}: ${verdict.reason}\n`);
  else process.stdout.write(`BROKEN at row ${verdict.brokenAt}: ${verdict.reason} (${counted(verdict.rows, 'row')} verified before it)\n`);
  return false;
}

/**
 * The line of an intact log's checkpoints: how far they vouch for the chain (the newest row
 * still as its checkpoint recorded it, and so every row before it), then how many were
 * checked and how. A checkpoint of a pruned row vouches for nothing still in the log.
 */
export function formatCheckpoints(r: CheckpointReport): string {
  const pruned = (count: number) => `${count} ${count === 1 ? 'names a row' : 'name rows'} pruned by retention`;
  const checked = counted(r.checked, 'checkpoint');
  if (!r.newestMatched) {
    const naming = r.checked === 1 ? 'naming a row' : 'all naming rows';
    return `checkpoints: ${checked} checked, ${naming} pruned by retention (older than audit.retention): none names a row still in the log to hold the chain to`;
  }
  const how = [`${r.matched} ${r.matched === 1 ? 'matches' : 'match'} the log`, ...(r.pruned > 0 ? [`${pruned(r.pruned)}, older than audit.retention`] : [])];
  const newest = `row ${r.newestMatched.id} written ${new Date(r.newestMatched.at).toISOString()}`;
  return `checkpoints: the chain holds up to the newest checkpoint, ${newest} (${checked} checked: ${how.join(', ')})`;
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
