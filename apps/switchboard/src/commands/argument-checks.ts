import { readArguments as auditCheckpoint } from './audit-checkpoint.js';
import { readArguments as auditDigest } from './audit-digest.js';
import { readArguments as auditExport } from './audit-export.js';
import { readArguments as auditStats } from './audit-stats.js';
import { readArguments as auditTail } from './audit-tail.js';
import { readArguments as auditVerify } from './audit-verify.js';
import { CONFIG_ARGUMENTS } from './config.js';
import { DB_ARGUMENTS } from './db.js';
import type { CommandFamily } from './index.js';
import { KEYS_ARGUMENTS } from './keys.js';
import { POLICY_ARGUMENTS } from './policy.js';
import { SECRETS_ARGUMENTS } from './secrets.js';
import { TOOLS_ARGUMENTS } from './tools.js';

/**
 * What each subcommand reads of its arguments, the same functions its run() starts with, so
 * a command line can be checked without running it: nothing is opened, loaded or read from
 * stdin. docs-commands.spec.ts checks every command the README and docs/ show with these.
 */
export const ARGUMENT_CHECKS: Record<CommandFamily, Record<string, (args: string[]) => unknown>> = {
  config: CONFIG_ARGUMENTS,
  db: DB_ARGUMENTS,
  audit: { tail: auditTail, export: auditExport, stats: auditStats, verify: auditVerify, checkpoint: auditCheckpoint, digest: auditDigest },
  keys: KEYS_ARGUMENTS,
  policy: POLICY_ARGUMENTS,
  tools: TOOLS_ARGUMENTS,
  secrets: SECRETS_ARGUMENTS,
};
