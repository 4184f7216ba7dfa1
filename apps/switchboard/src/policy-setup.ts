import { createHash } from 'node:crypto';
import { ConfigError, FileWatcher, formatPath, readConfigBytes, type GatewayConfig } from '@switchboard/config';
import { isLoopbackHost } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import { actionsOutsideSelectors, aliasedServerSelectors, inertAllowRules, loadPolicyBytes, PolicyEngine, unknownServerSelectors, unmatchableToolPatterns, unmatchableUserEntries, type PolicyDocument } from '@switchboard/policy';

/**
 * The policy in force, and the watch that reloads its file. Without a file only the default
 * effect applies: allow on a loopback listener without authentication (everyone is the local
 * user), deny otherwise, unless `policy.defaultEffect` says otherwise. An invalid file at start stops the start,
 * listing every problem; an invalid edit later is logged and the old policy stays.
 */
export function openPolicy(
  config: GatewayConfig,
  logger: Logger,
  /** After a reload: what hosts may list can have changed. */
  onReloaded: () => void = () => undefined,
  /** Each policy put in force, and each edit refused: for the audit log (policy-audit.ts). */
  onPolicyEvent: (event: PolicyEvent) => void = () => undefined,
): { engine: PolicyEngine; watcher?: FileWatcher<LoadedPolicy>; loadedBytes?: Buffer } {
  const fallback = policyDefaultEffect(config);
  const file = config.policy.file;
  if (!file) {
    const refusesAll = noPolicyWarning(config);
    if (refusesAll) logger.warn(refusesAll);
    onPolicyEvent({ kind: 'loaded', file: null, defaultEffect: fallback });
    return { engine: PolicyEngine.defaultOnly(fallback) };
  }
  const read = readPolicyFile(file);
  if ('problems' in read) throw new Error(read.problems);
  const { doc } = read;
  const engine = new PolicyEngine(doc, fallback, file);
  logger.info({ file, roles: Object.keys(doc.roles).length, defaultEffect: engine.defaultEffect }, 'policy loaded');
  let inForce: PolicyFacts = { file, digest: fileDigest(read.bytes), defaultEffect: engine.defaultEffect, ...counts(doc) };
  onPolicyEvent({ kind: 'loaded', ...inForce });
  const warnIneffective = (loaded: PolicyDocument) => {
    for (const { path, reason } of ineffectiveRules(loaded, config)) logger.warn(path === undefined ? { file } : { file, path }, reason);
  };
  warnIneffective(doc);
  const load = (path: string, bytes: Buffer): LoadedPolicy => ({ doc: loadPolicyBytes(path, bytes), bytes });
  const watcher = new FileWatcher(file, load, (change) => {
    if ('error' in change) {
      logger.error({ file, problems: change.error.problems }, 'policy change refused; the previous policy stays in force');
      onPolicyEvent({ kind: 'refused', file, digest: inForce.digest, problems: change.error.problems.map((p) => (p.path ? `${p.path}: ${p.reason}` : p.reason)) });
      return;
    }
    const previous = inForce;
    engine.replace(change.doc);
    inForce = { file, digest: fileDigest(change.bytes), defaultEffect: engine.defaultEffect, ...counts(change.doc) };
    logger.info({ file, version: engine.version, defaultEffect: engine.defaultEffect }, 'policy reloaded');
    // Every call no rule denies is allowed from now on: the one edit that opens the gateway.
    if (previous.defaultEffect === 'deny' && inForce.defaultEffect === 'allow') logger.warn({ file }, widenedDefault('deny', 'allow'));
    onPolicyEvent({ kind: 'reloaded', ...inForce, previousDigest: previous.digest, previousDefaultEffect: previous.defaultEffect });
    warnIneffective(change.doc);
    onReloaded();
  }, undefined, undefined, (message) => logger.warn({ file }, message));
  // The runtime starts the watch once the upstreams are up, from these bytes: an edit saved
  // meanwhile is not lost.
  return { engine, watcher, loadedBytes: read.bytes };
}

/** A policy file as the watcher loads it: the bytes too, whose digest the audit rows hold. */
interface LoadedPolicy {
  doc: PolicyDocument;
  bytes: Buffer;
}

/** The policy in force, as its audit rows describe it. */
export interface PolicyFacts {
  file: string;
  /** sha256 of the file's bytes: `sha256sum policy.yaml`, or a commit's copy, gives the same. */
  digest: string;
  defaultEffect: 'allow' | 'deny';
  roles: number;
  rules: number;
}

export type PolicyEvent =
  | ({ kind: 'loaded' } & PolicyFacts)
  | { kind: 'loaded'; file: null; defaultEffect: 'allow' | 'deny' }
  | ({ kind: 'reloaded'; previousDigest: string; previousDefaultEffect: 'allow' | 'deny' } & PolicyFacts)
  | { kind: 'refused'; file: string; digest: string; problems: string[] };

export function widenedDefault(previous: 'allow' | 'deny', now: 'allow' | 'deny'): string {
  return `the policy changed: the default effect is now ${now} (it was ${previous})`;
}

function fileDigest(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function counts(doc: PolicyDocument): { roles: number; rules: number } {
  const roles = Object.values(doc.roles);
  return { roles: roles.length, rules: roles.reduce((n, rules) => n + rules.length, 0) };
}

/**
 * Without a policy file, a default of deny refuses every call: a team endpoint set up without
 * its policy yet. `start` logs it and `config check` prints it, in the same words.
 */
export function noPolicyWarning(config: GatewayConfig): string | undefined {
  if (config.policy.file || policyDefaultEffect(config) !== 'deny') return undefined;
  return 'no policy file and default effect deny: every tools/call, read, prompt and completion is refused; set policy.file (docs/policy.md)';
}

/** A warning about a policy file: at a path in it, or about the file as a whole. */
export interface PolicyWarning {
  path?: string;
  reason: string;
}

/**
 * Rules that cannot do what they say: an action the rule's item selector rules out is never
 * matched; with a config to compare with, also a `server:` that names only an alias (it never
 * applies) and allow rules under the default nobody chose (they change nothing). `start` logs
 * them at load and each reload; `config check` and `policy lint` print them.
 */
export function ineffectiveRules(doc: PolicyDocument, config: GatewayConfig | undefined): PolicyWarning[] {
  const found: PolicyWarning[] = [
    ...actionsOutsideSelectors(doc),
    ...(config ? aliasedServerSelectors(doc, config.servers) : []),
    // Selectors that can match nothing (libs/policy says how each is judged): a server: no
    // upstream has, a tool: no public name fits (whitespace is judged without a config too),
    // a users: entry no caller can have.
    ...(config ? unknownServerSelectors(doc, config.servers) : []),
    ...unmatchableToolPatterns(doc, config),
    ...unmatchableUserEntries(doc, config?.auth),
    ...(config ? unanswerableApprovers(doc, config) : []),
  ];
  const inert = config && inertAllowWarning(doc, config);
  if (inert) found.push({ reason: inert });
  return found;
}

/**
 * Confirm rules with approvers where nobody but the caller could answer: the daemon refuses
 * their calls at once (gates/approval-gate.ts), which their author should learn at load,
 * not from the first refused call.
 */
function unanswerableApprovers(doc: PolicyDocument, config: GatewayConfig): PolicyWarning[] {
  const why =
    config.auth.mode !== 'required'
      ? `auth.mode is ${config.auth.mode}: every caller is the same local user, so nobody but the caller could approve`
      : !config.relay.inbox
        ? 'relay.inbox is false: approvers answer in the inbox, and there is none'
        : undefined;
  if (!why) return [];
  const found: PolicyWarning[] = [];
  for (const [role, rules] of Object.entries(doc.roles)) {
    rules.forEach((rule, i) => {
      if (rule.approvers) found.push({ path: formatPath(['roles', role, i, 'approvers']), reason: `${why}; the rule's calls are refused (docs/approvals.md)` });
    });
  }
  return found;
}

/**
 * A policy file of allow rules under the default nobody chose, allow on a loopback listener without authentication:
 * they change nothing, though their author most likely meant them as what to serve. A default
 * of allow set in the file or the config is a choice (allow rules kept for a later switch to
 * deny, say), so it is not second-guessed.
 */
function inertAllowWarning(doc: PolicyDocument, config: GatewayConfig): string | undefined {
  if (doc.defaultEffect !== undefined || config.policy.defaultEffect !== undefined) return undefined;
  const inert = inertAllowRules(doc, policyDefaultEffect(config));
  if (inert.length === 0) return undefined;
  const names = inert.length > 3 ? `${inert.slice(0, 3).join(', ')} and ${inert.length - 3} more` : inert.join(', ');
  const rules = inert.length === 1 ? `the allow rule ${names} allows` : `the ${inert.length} allow rules ${names} allow`;
  return (
    `${rules} nothing that is not allowed already: on a loopback listener without authentication the default effect is allow, and only deny, ` +
    'confirm and `allow: sample` rules change a decision; set defaultEffect: deny to serve only what the rules allow (docs/policy.md)'
  );
}

/**
 * Without a matching rule (and without a file's own defaultEffect): allow on a loopback
 * listener without authentication, deny otherwise. `auth.mode: required` tells callers apart
 * on purpose (keys, an issuer's tokens, a proxy on the same host forwarding a team's
 * requests), so on loopback too nothing is served until a policy says what: with allow, every
 * token the issuer mints for anyone called every tool, and a policy of deny rules alone left
 * the rest open without a word.
 */
export function policyDefaultEffect(config: GatewayConfig): 'allow' | 'deny' {
  return config.policy.defaultEffect ?? (isLoopbackHost(config.listen.host) && config.auth.mode === 'none' ? 'allow' : 'deny');
}

/**
 * A policy file, or every problem of it as one message (invalidPolicyMessage): what the
 * daemon, `start`'s check before it opens anything, and the commands each turn into their
 * own refusal.
 */
export function readPolicyFile(file: string): { doc: PolicyDocument; bytes: Buffer } | { problems: string } {
  try {
    const bytes = readConfigBytes(file);
    return { doc: loadPolicyBytes(file, bytes), bytes };
  } catch (err) {
    if (err instanceof ConfigError) return { problems: invalidPolicyMessage(err) };
    throw err;
  }
}

/** A refused policy file as people read it: the file, then every problem. */
function invalidPolicyMessage(err: ConfigError): string {
  return [`invalid policy file ${err.file}:`, ...err.problems.map((p) => `  - ${p.path ? `${p.path}: ` : ''}${p.reason}`)].join('\n');
}
