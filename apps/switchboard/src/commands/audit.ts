import { runSubcommand } from './command-args.js';

type Run = (args: string[], usage: string) => Promise<number>;

/** Each `audit` subcommand parses its own options and returns the exit code; loaded when it runs. */
const lazily =
  (load: () => Promise<{ run: Run }>): Run =>
  async (args, usage) =>
    (await load()).run(args, usage);

const SUBCOMMANDS: Record<string, Run> = {
  tail: lazily(() => import('./audit-tail.js')),
  export: lazily(() => import('./audit-export.js')),
  stats: lazily(() => import('./audit-stats.js')),
  verify: lazily(() => import('./audit-verify.js')),
  checkpoint: lazily(() => import('./audit-checkpoint.js')),
  digest: lazily(() => import('./audit-digest.js')),
};

/** `switchboard audit <subcommand>`. */
export function runAuditCommand(args: string[], usage: string): Promise<number> {
  return runSubcommand('audit', args, usage, SUBCOMMANDS);
}
