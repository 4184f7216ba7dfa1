import { isMissingCommand, missingCommand, printUsage } from './command-args.js';
import { usageError } from './command-error.js';

/** Each `audit` subcommand parses its own options and returns the exit code. */
const SUBCOMMANDS: Record<string, () => Promise<{ run(args: string[], usage: string): Promise<number> }>> = {
  tail: () => import('./audit-tail.js'),
  export: () => import('./audit-export.js'),
  stats: () => import('./audit-stats.js'),
  verify: () => import('./audit-verify.js'),
  checkpoint: () => import('./audit-checkpoint.js'),
  digest: () => import('./audit-digest.js'),
};

/** `switchboard audit <subcommand>`. */
export async function runAuditCommand(args: string[], usage: string): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand === '--help' || subcommand === '-h') return printUsage(usage);
  if (isMissingCommand(subcommand)) throw usageError(`${missingCommand(subcommand)}\n\n${usage}`);
  const load = Object.hasOwn(SUBCOMMANDS, subcommand) ? SUBCOMMANDS[subcommand] : undefined;
  if (!load) throw usageError(`unknown audit command '${subcommand}'; try: ${Object.keys(SUBCOMMANDS).join(', ')}`);
  return (await load()).run(rest, usage);
}
