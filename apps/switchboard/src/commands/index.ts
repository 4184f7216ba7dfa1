import { runAuditCommand } from './audit.js';
import { runReporting } from './command-error.js';
import { runConfigCommand } from './config.js';
import { runDbCommand } from './db.js';
import { runKeysCommand } from './keys.js';
import { runPolicyCommand } from './policy.js';
import { runSecretsCommand } from './secrets.js';
import { runToolsCommand } from './tools.js';

export type CommandFamily = 'config' | 'db' | 'audit' | 'keys' | 'policy' | 'tools' | 'secrets';

const FAMILIES: Record<CommandFamily, (args: string[], usage: string) => Promise<number>> = {
  config: runConfigCommand,
  db: runDbCommand,
  audit: runAuditCommand,
  keys: runKeysCommand,
  policy: runPolicyCommand,
  tools: runToolsCommand,
  secrets: runSecretsCommand,
};

/** The commands that check the config or work on the database rather than run the gateway. */
export function runCommandFamily(family: CommandFamily, args: string[], usage: string): Promise<number> {
  return runReporting(() => FAMILIES[family](args, usage));
}
