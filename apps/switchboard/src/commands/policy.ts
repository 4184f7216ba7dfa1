import { resolve } from 'node:path';
import type { GatewayConfig } from '@switchboard/config';
import { callerName, counted, MAX_URI_CHARS, parseCallerName } from '@switchboard/core';
import { approverWords } from '@switchboard/inbox';
import { PolicyEngine, unnormalizedPath, type PolicyDecision, type PolicyDocument } from '@switchboard/policy';
import { ineffectiveRules, policyDefaultEffect, readPolicyFile } from '../policy-setup.js';
import { COMMON_OPTIONS, commaList, loadCommandConfig, parseCommandArgs, runSubcommand, printUsage } from './command-args.js';
import { CommandError, usageError } from './command-error.js';
import { policyRequestOf } from './policy-request.js';
import { rolesForCheck } from './policy-roles.js';

const CHECK_OPTIONS = {
  ...COMMON_OPTIONS,
  file: { type: 'string' },
  principal: { type: 'string' },
  roles: { type: 'string' },
  groups: { type: 'string' },
  action: { type: 'string' },
  tool: { type: 'string' },
  prompt: { type: 'string' },
  resource: { type: 'string' },
  server: { type: 'string' },
  args: { type: 'string' },
} as const;
const LINT_OPTIONS = { ...COMMON_OPTIONS, file: { type: 'string' } } as const;

/**
 * What each `policy` subcommand reads of its arguments, without running it; bad usage throws.
 * What check's request is (--tool, --resource, --server, --action) is judged with the config.
 */
export const POLICY_ARGUMENTS = {
  check(args: string[]) {
    const { values } = parseCommandArgs(args, CHECK_OPTIONS);
    if (values.help) return { values, caller: undefined };
    if (!values.principal) throw usageError('policy check needs --principal P');
    // As the policy's `users:` names callers: `alice` an API key, `jwt:alice` a token's principal (callerName).
    const caller = parseCallerName(values.principal);
    if (!caller) throw usageError(`--principal must be a key's name or jwt:NAME, stdio:USER, loopback:anonymous; got '${values.principal}'`);
    return { values, caller };
  },
  lint: (args: string[]) => parseCommandArgs(args, LINT_OPTIONS),
};

/** `switchboard policy check|lint`. */
export async function runPolicyCommand(args: string[], usage: string): Promise<number> {
  return runSubcommand('policy', args, usage, { check, lint });
}

/**
 * Validates a policy file (--file, else the config's policy.file); every problem listed, exit
 * 1. Warns of rules that cannot do what they say (warnOfIneffectiveRules), more of them with
 * a config to compare with (no --file, or --config given).
 */
async function lint(args: string[], usage: string): Promise<number> {
  const { values } = POLICY_ARGUMENTS.lint(args);
  if (values.help) return printUsage(usage);
  const config = values.file && !values.config ? undefined : loadCommandConfig(values);
  const file = policyFile(values.file, config);
  const doc = loadPolicyForCommand(file);
  warnOfIneffectiveRules(doc, config, file);
  const rules = Object.values(doc.roles).reduce((n, r) => n + r.length, 0);
  process.stdout.write(`ok: ${file}: ${counted(Object.keys(doc.roles).length, 'role')}, ${counted(rules, 'rule')}\n`);
  return 0;
}

/**
 * The decision the daemon would make for one request, and the rule that makes it. Exit 0
 * when allowed, 3 when denied, so scripts can test policies. Without --roles, a key holder
 * is decided with the roles of the key (rolesForCheck), as the daemon decides.
 */
async function check(args: string[], usage: string): Promise<number> {
  const { values, caller } = POLICY_ARGUMENTS.check(args);
  if (values.help || !caller) return printUsage(usage);
  const config = loadCommandConfig(values);
  const file = values.file ?? config.policy.file;
  const fallback = policyDefaultEffect(config);
  const engine = file ? new PolicyEngine(loadPolicyForCommand(resolve(file)), fallback, file) : PolicyEngine.defaultOnly(fallback);
  const [type, action, fields] = policyRequestOf(values, config);
  const checked = await rolesForCheck(caller, values.roles, config);
  const principal = { ...checked.caller, roles: checked.roles, groups: commaList(values.groups) };
  const refused = type === 'Resource' ? refusedUri(values.resource!, fields.uri!) : undefined;
  const decision: PolicyDecision = refused ? { allowed: false, rule: refused.rule } : engine.decide(principal, action, type, fields);
  process.stdout.write(
    `${verdictOf(decision)}  rule: ${decision.rule}${refused ? ` (the daemon refuses the URI: ${refused.reason})` : ''}` +
      `${decision.approvers ? ` (approved in the inbox by someone else with ${approverWords(decision.approvers)})` : ''}\n` +
      `principal ${callerName(principal)} has roles: ${engine.rolesOf(principal).join(', ') || 'none'}${checked.source ? ` (${checked.source})` : ''}; ` +
      `policy: ${file ?? '(none)'}, default ${engine.defaultEffect}\n`,
  );
  if (checked.note) process.stderr.write(`${checked.note}\n`);
  return decision.allowed ? 0 : 3;
}

/**
 * A URI the daemon refuses (-32602) before any rule sees it, in the order it looks: one longer
 * than a host may send (before it is even routed), then one not normalized, as sent or as
 * the upstream's URI a gateway URI wraps (`upstream`).
 */
function refusedUri(sent: string, upstream: string): { rule: string; reason: string } | undefined {
  if (sent.length > MAX_URI_CHARS) {
    return { rule: 'request:uri-too-long', reason: `'uri' is ${sent.length} characters; the limit is ${MAX_URI_CHARS}` };
  }
  const odd = unnormalizedPath(sent) ?? unnormalizedPath(upstream);
  return odd ? { rule: 'request:unnormalized-uri', reason: odd } : undefined;
}

/**
 * The decision as `check` prints it: a `confirm` rule's call runs only once a person
 * approves it, which an admin checking the rule needs to see (it still exits 0).
 */
export function verdictOf(decision: PolicyDecision): 'allow' | 'confirm' | 'deny' {
  if (!decision.allowed) return 'deny';
  return decision.confirm ? 'confirm' : 'allow';
}

function policyFile(given: string | undefined, config: GatewayConfig | undefined): string {
  if (given) return resolve(given);
  if (!config?.policy.file) throw usageError('no policy file: give --file FILE, or set policy.file in the config');
  return config.policy.file;
}

/**
 * A policy file, or a CommandError listing every problem: what `lint` (exit 1, problems
 * found) and `config check` (exit 2, as `start` refuses it) report.
 */
export function loadPolicyForCommand(file: string, exitCode: 1 | 2 = 1): PolicyDocument {
  const read = readPolicyFile(file);
  if ('problems' in read) throw new CommandError(read.problems, exitCode);
  return read.doc;
}

/** The rules that cannot do what they say (ineffectiveRules), a warning on stderr for each. */
export function warnOfIneffectiveRules(doc: PolicyDocument, config: GatewayConfig | undefined, file = config?.policy.file): void {
  for (const { path, reason } of ineffectiveRules(doc, config)) process.stderr.write(`warning: ${file}: ${path === undefined ? '' : `${path}: `}${reason}\n`);
}
