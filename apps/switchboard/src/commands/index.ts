import { runAuditCommand } from './audit.js';
import { runReporting } from './command-error.js';
import { runDbCommand } from './db.js';

/** The commands that work on the database rather than run the gateway. */
export function runCommandFamily(family: 'db' | 'audit', args: string[], usage: string): Promise<number> {
  return runReporting(() => (family === 'db' ? runDbCommand(args, usage) : runAuditCommand(args, usage)));
}
