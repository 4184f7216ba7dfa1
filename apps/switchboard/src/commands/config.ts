import type { GatewayConfig } from '@switchboard/config';
import { COMMON_OPTIONS, loadCommandConfig, parseCommandArgs, printUsage, runSubcommand } from './command-args.js';
import { policyDefaultEffect } from '../policy-setup.js';
import { loadPolicyForCommand, warnAliasedServers } from './policy.js';

/** `switchboard config check`. */
export async function runConfigCommand(args: string[], usage: string): Promise<number> {
  return runSubcommand('config', args, usage, { check });
}

/**
 * Everything `switchboard start` would refuse in a config before it opens anything: the
 * file (every problem listed), its policy file and an unauthenticated listener off
 * loopback, each exit 2 as at start. Touches no database and starts no
 * upstream, so it is safe to run before a reload or in CI. Warnings go to stderr; a summary
 * of what the daemon would do goes to stdout.
 */
async function check(args: string[], usage: string): Promise<number> {
  const { values } = parseCommandArgs(args, COMMON_OPTIONS);
  if (values.help) return printUsage(usage);
  const config = loadCommandConfig(values);
  const policy = config.policy.file ? loadPolicyForCommand(config.policy.file, 2) : undefined;
  if (policy) warnAliasedServers(policy, config);
  // The file's own defaultEffect, when it sets one, wins over the config's.
  process.stdout.write(summary(config, policy?.defaultEffect ?? policyDefaultEffect(config)));
  return 0;
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
