import { dirname, resolve } from 'node:path';
import { defaultConfigPath, parseConfigText, readConfigBytes, type GatewayConfig } from '@switchboard/config';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage, runSubcommand } from './command-args.js';
import { CommandError } from './command-error.js';
import { noPolicyWarning, policyDefaultEffect } from '../policy-setup.js';
import { loadPolicyForCommand, warnOfIneffectiveRules } from './policy.js';

/** `switchboard config check`. */
export async function runConfigCommand(args: string[], usage: string): Promise<number> {
  return runSubcommand('config', args, usage, { check });
}

/** What each `config` subcommand reads of its arguments, without running it; bad usage throws. */
export const CONFIG_ARGUMENTS = { check: (args: string[]) => parseCommandArgs(args, COMMON_OPTIONS) };

/**
 * Everything `switchboard start` would refuse in a config before it opens anything: the
 * file (every problem listed), its policy file and an unauthenticated listener off
 * loopback, each exit 2 as at start. Touches no database and starts no
 * upstream, so it is safe to run before a reload or in CI. Warnings go to stderr; a summary
 * of what the daemon would do goes to stdout.
 */
async function check(args: string[], usage: string): Promise<number> {
  const { values } = CONFIG_ARGUMENTS.check(args);
  if (values.help) return printUsage(usage);
  let config: GatewayConfig;
  try {
    config = loadCommandConfig(values);
  } catch (err) {
    // A refused config still names its policy file: its problems are listed in the same run.
    const policyProblems = err instanceof CommandError ? policyProblemsBeside(values.config ?? defaultConfigPath()) : undefined;
    throw policyProblems ? new CommandError(`${err instanceof Error ? err.message : String(err)}\n${policyProblems}`, 2) : err;
  }
  const policy = config.policy.file ? loadPolicyForCommand(config.policy.file, 2) : undefined;
  if (policy) warnOfIneffectiveRules(policy, config);
  const refusesAll = noPolicyWarning(config);
  if (refusesAll) process.stderr.write(`warning: ${refusesAll}\n`);
  // The file's own defaultEffect, when it sets one, wins over the config's.
  process.stdout.write(summary(config, policy?.defaultEffect ?? policyDefaultEffect(config)));
  return 0;
}

/** The problems of the policy file a config that was refused names, if it names one that has any. */
function policyProblemsBeside(configFile: string): string | undefined {
  let file: unknown;
  try {
    const raw = parseConfigText(configFile, readConfigBytes(resolve(configFile))) as { policy?: { file?: unknown } } | null;
    file = raw?.policy?.file;
  } catch {
    return undefined; // the config's own problems say why it cannot be read
  }
  if (typeof file !== 'string' || file === '') return undefined;
  try {
    loadPolicyForCommand(resolve(dirname(resolve(configFile)), file), 2);
    return undefined;
  } catch (err) {
    return err instanceof CommandError ? err.message : undefined;
  }
}

function summary(config: GatewayConfig, defaultEffect: 'allow' | 'deny'): string {
  const enabled = config.servers.filter((s) => s.enabled);
  const servers = enabled.map((s) => `${s.name} (${s.transport})`).join(', ') || 'none';
  const audit = config.audit.enabled ? `${config.audit.mode}, retention ${config.audit.retention}` : 'off';
  return [
    `ok: ${config.source}`,
    `  listen: ${config.listen.host}:${config.listen.port}, auth: ${config.auth.mode}`,
    `  upstreams: ${enabled.length} enabled: ${servers}${config.servers.length > enabled.length ? `; ${config.servers.length - enabled.length} disabled` : ''}`,
    `  data: ${config.dataDir}; audit: ${audit}`,
    `  policy: ${config.policy.file ?? 'none'}; default ${defaultEffect}`,
    '',
  ].join('\n');
}
