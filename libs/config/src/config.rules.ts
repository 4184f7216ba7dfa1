import { DurationRefused, durationMs, isLoopbackHost, type DurationSetting } from '@switchboard/core';
import { formatPath } from './config.errors.js';
import { isRecord } from './config.expand.js';
import { DEFAULT_RELAY_TIMEOUT_MS, DEFAULT_TIMEOUTS } from './config.schema.js';
import { AUDIT_CHECKPOINT_EVERY, AUDIT_DURATION_DEFAULTS, AUDIT_RETENTION } from './config.schema.audit.js';
import { MAX_TIMER_MS } from './config.schema.fields.js';
import { SERVER_NAME_MAX } from './config.schema.servers.js';

export interface RuleProblem {
  path: string;
  reason: string;
}

export type Transport = 'stdio' | 'http' | 'sse';

const STDIO_ONLY = ['command', 'args', 'env', 'cwd'] as const;
const REMOTE_ONLY = ['url', 'headers'] as const;

/**
 * Keys other hosts give a meaning Switchboard does not carry out, and whose loss would not
 * show until the server misbehaves (a missing credential looks like an auth failure
 * upstream). Refused rather than ignored like other unknown keys.
 */
const UNSUPPORTED_SERVER_KEYS: Record<string, string> = {
  envFile:
    'is not supported: Switchboard reads no env files; list the variables under env, ' +
    'as values or as ${env:NAME} taken from the daemon\'s environment',
  headersHelper:
    'is not supported: Switchboard runs no command for headers (Claude Code does); list them under headers, ' +
    'with ${env:NAME} for a token taken from the daemon\'s environment',
};

/**
 * `type` wins; without it `command` means stdio and `url` means http, as Claude Desktop,
 * Cursor and VS Code files are written. Undefined when neither says (or `type` is invalid).
 */
export function resolveTransport(server: Record<string, unknown>): Transport | undefined {
  switch (server['type']) {
    case 'stdio':
    case 'http':
    case 'sse':
      return server['type'];
    case 'streamable-http':
      return 'http';
    case undefined:
      if (server['command'] !== undefined) return 'stdio';
      if (server['url'] !== undefined) return 'http';
  }
  return undefined;
}

/**
 * The rules that span several keys, which a per-field schema cannot express. They run on
 * the raw (expanded) file even when the schema found problems, so that every problem is
 * reported in one go; values of the wrong type are skipped here, the schema reports them.
 */
export function checkRules(raw: unknown): RuleProblem[] {
  const problems: RuleProblem[] = [];
  if (!isRecord(raw)) return problems;
  const report = (path: PropertyKey[], reason: string) => problems.push({ path: formatPath(path), reason });

  if (raw['mcpServers'] !== undefined && raw['servers'] !== undefined) {
    report(['servers'], 'cannot be used together with mcpServers (they are synonyms); keep one');
  }

  const unsafe = unauthenticatedOffLoopback(raw);
  if (unsafe) report(['auth', 'mode'], unsafe);

  const top = topTimeouts(raw['timeouts']);
  if (top.maxRequestMs < top.requestMs) {
    report(['timeouts', 'maxRequestMs'], `must be at least timeouts.requestMs (${top.requestMs})`);
  }

  for (const mapKey of ['mcpServers', 'servers'] as const) {
    const servers = raw[mapKey];
    if (!isRecord(servers)) continue;
    checkNames(mapKey, servers, report);
    for (const [name, server] of Object.entries(servers)) {
      if (!isRecord(server)) continue;
      checkTransport([mapKey, name], server, report);
      for (const [key, reason] of Object.entries(UNSUPPORTED_SERVER_KEYS)) {
        if (server[key] !== undefined) report([mapKey, name, key], reason);
      }
      checkServerTimeouts([mapKey, name], server['timeouts'], top, report);
    }
  }
  return problems;
}

/**
 * What the file allows but is likely a mistake, said at every load (start, reload, the CLI)
 * without refusing the file. Runs on the raw (expanded) file; values of the wrong type are
 * the schema's problems.
 */
export function ruleWarnings(raw: unknown): RuleProblem[] {
  const warnings: RuleProblem[] = [];
  const auth = isRecord(raw) ? raw['auth'] : undefined;
  const jwt = isRecord(auth) ? auth['jwt'] : undefined;
  const jwksUrl = isRecord(jwt) ? jwt['jwksUrl'] : undefined;
  const reason = typeof jwksUrl === 'string' ? cleartextKeysReason(jwksUrl) : undefined;
  if (reason) warnings.push({ path: formatPath(['auth', 'jwt', 'jwksUrl']), reason });
  const audit = isRecord(raw) ? raw['audit'] : undefined;
  for (const reason of shortRetentionReasons(isRecord(audit) ? audit : {})) {
    warnings.push({ path: formatPath(['audit', 'retention']), reason });
  }
  const relay = relayLongerThanCallsReason(raw);
  if (relay) warnings.push({ path: formatPath(['relay', 'timeoutMs']), reason: relay });
  const anyHost = anyHostOffLoopbackReason(raw);
  if (anyHost) warnings.push({ path: formatPath(['security', 'allowedHosts']), reason: anyHost });
  return warnings;
}

/**
 * Why a listener off loopback that lists no Host names is likely a mistake: the Host check
 * (DNS rebinding) then lets every name through, and the protected-resource metadata and the
 * 401's resource_metadata are built from the request's Host, so they name whatever a caller
 * sends. A warning, not a refusal: behind a proxy that sets Host it is a setup people run.
 */
function anyHostOffLoopbackReason(raw: unknown): string | undefined {
  const listen = isRecord(raw) ? raw['listen'] : undefined;
  const host = isRecord(listen) ? listen['host'] : undefined;
  if (typeof host !== 'string' || host.length === 0 || isLoopbackHost(host)) return undefined;
  const security = isRecord(raw) ? raw['security'] : undefined;
  const allowed = isRecord(security) ? security['allowedHosts'] : undefined;
  if (Array.isArray(allowed) && allowed.length > 0) return undefined;
  const port = isRecord(listen) && typeof listen['port'] === 'number' && listen['port'] > 0 ? listen['port'] : 8780;
  return (
    `is empty while listen.host ${host} is not a loopback address: a request with any Host header is served (a DNS-rebinding page, a spoofed name), ` +
    `and the protected-resource metadata and 401s name whichever Host it carries; list the names hosts use, e.g. [gateway.internal:${port}]`
  );
}

/**
 * Why the relay's answer time is longer than any call lasts, if it is. A question an upstream
 * asks during a call is withdrawn when the call ends, and timeouts.maxRequestMs ends every
 * call. A warning, not a refusal: a question asked outside any call (a per-session server's,
 * with nothing in flight) still has all of relay.timeoutMs, and no per-server relay.timeoutMs
 * exists, so a server's own shorter maxRequestMs is not warned of: nothing could be done about it.
 */
function relayLongerThanCallsReason(raw: unknown): string | undefined {
  const relay = isRecord(raw) ? raw['relay'] : undefined;
  const set = isRecord(relay) ? relay['timeoutMs'] : undefined;
  const relayMs = set === undefined ? DEFAULT_RELAY_TIMEOUT_MS : millis(set);
  const timeouts = isRecord(raw) ? raw['timeouts'] : undefined;
  const setMax = isRecord(timeouts) ? timeouts['maxRequestMs'] : undefined;
  if (relayMs === undefined || (setMax !== undefined && millis(setMax) === undefined)) return undefined; // the schema's problems
  const { maxRequestMs } = topTimeouts(timeouts);
  if (relayMs <= maxRequestMs) return undefined;
  const text = set === undefined ? `${relayMs} (the default)` : String(relayMs);
  return (
    `is ${text}, more than timeouts.maxRequestMs (${maxRequestMs}): a question an upstream asks during a call ends with the call, ` +
    `which timeouts.maxRequestMs ends at ${maxRequestMs} ms, so it never gets the rest; lower relay.timeoutMs or raise timeouts.maxRequestMs`
  );
}

/** A day: a retention shorter than this keeps less history than most people mean to keep. */
const DAY_MS = 86_400_000;

/** What the file sets for `audit.<key>` (or its default) and its milliseconds; undefined when the schema refuses it. */
function auditDuration(audit: Record<string, unknown>, key: keyof typeof AUDIT_DURATION_DEFAULTS, setting: DurationSetting) {
  const text = audit[key] ?? AUDIT_DURATION_DEFAULTS[key];
  if (typeof text !== 'string') return undefined;
  try {
    return { text, ms: durationMs(text, setting) };
  } catch (err) {
    if (err instanceof DurationRefused) return undefined;
    throw err;
  }
}

/**
 * Why the retention the file sets is likely shorter than meant, if it is. Pruning deletes
 * for good and `audit verify` still passes after it, so a short retention is said at every
 * load; one shorter than the checkpoint interval also leaves `verify --checkpoint` with
 * nothing to check: each checkpoint's row is pruned before the next checkpoint is logged.
 */
function shortRetentionReasons(audit: Record<string, unknown>): string[] {
  const retention = auditDuration(audit, 'retention', AUDIT_RETENTION);
  if (retention?.ms === undefined) return []; // refused, or off
  const reasons: string[] = [];
  if (retention.ms < DAY_MS) {
    reasons.push(
      `is ${retention.text}, less than a day: each hourly pruning deletes every row older than that, for good, ` +
        "and `audit verify` still passes; 'off' keeps every row",
    );
  }
  const every = auditDuration(audit, 'checkpointEvery', AUDIT_CHECKPOINT_EVERY);
  if (every?.ms !== undefined && retention.ms < every.ms) {
    reasons.push(
      `is ${retention.text}, shorter than audit.checkpointEvery (${every.text}): each checkpoint's row is pruned ` +
        'before the next checkpoint is logged, so `audit verify --checkpoint` has no row left to check it against',
    );
  }
  return reasons;
}

/**
 * Why fetching the issuer's keys from `url` is unsafe, or undefined: the JWKS decides whose
 * signature makes a token, so keys fetched in the clear are a credential for anyone on the
 * path. A warning, not a refusal: an issuer reached over a private network (a compose file's
 * `http://keycloak:8080`) is a setup people run, and one the operator can judge.
 */
function cleartextKeysReason(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined; // the schema says what is wrong with it
  }
  if (parsed.protocol !== 'http:' || isLoopbackHost(parsed.hostname)) return undefined;
  return (
    `is plain http to ${parsed.host}, which is not a loopback address: whoever is on the path can replace the ` +
    "issuer's keys with their own and sign tokens as anyone; use https"
  );
}

type Report = (path: PropertyKey[], reason: string) => void;

/**
 * Why a listener off loopback with `auth.mode: none` (the default) is refused, or undefined:
 * anyone who can reach it could call every upstream tool. Checked here, with every other
 * problem, and again after `--host` (unsafeListenReason).
 */
function unauthenticatedOffLoopback(raw: Record<string, unknown>): string | undefined {
  const listen = raw['listen'];
  const auth = raw['auth'];
  const host = isRecord(listen) ? listen['host'] : undefined;
  const mode = isRecord(auth) ? auth['mode'] : undefined;
  if (typeof host !== 'string' || host.length === 0 || (mode !== undefined && mode !== 'none')) return undefined;
  return unsafeListenReason(host, 'none');
}

/** Why listening on `host` with `authMode` is refused, or undefined when it is safe. */
export function unsafeListenReason(host: string, authMode: string): string | undefined {
  if (authMode !== 'none' || isLoopbackHost(host)) return undefined;
  return (
    `must be required to listen on ${host}, which is not a loopback address: without authentication anyone who can ` +
    'reach it could call every upstream tool (create keys with `switchboard keys create`), or listen on 127.0.0.1'
  );
}

function checkNames(mapKey: string, servers: Record<string, unknown>, report: Report): void {
  // Compared case-insensitively: `GitHub` and `github` would give prefixes people confuse.
  const nameOwner = new Map<string, string>();
  for (const name of Object.keys(servers)) {
    if (name.length === 0) report([mapKey, name], 'server name must not be empty');
    if (name.length > SERVER_NAME_MAX) report([mapKey, name], `server name is longer than ${SERVER_NAME_MAX} characters`);
    // Validation copies entries by assignment, and this one would set a prototype instead.
    if (name === '__proto__') report([mapKey, name], 'server name is reserved');
    const first = nameOwner.get(name.toLowerCase());
    if (first !== undefined) report([mapKey, name], `differs from server "${first}" only by case`);
    else nameOwner.set(name.toLowerCase(), name);
  }

  const aliasOwner = new Map<string, string>();
  for (const [name, server] of Object.entries(servers)) {
    const alias = isRecord(server) ? server['alias'] : undefined;
    if (typeof alias !== 'string') continue;
    const key = alias.toLowerCase();
    const named = nameOwner.get(key);
    if (named !== undefined && named !== name) report([mapKey, name, 'alias'], `is the name of server "${named}"`);
    const first = aliasOwner.get(key);
    if (first !== undefined) report([mapKey, name, 'alias'], `is also the alias of server "${first}"`);
    else aliasOwner.set(key, name);
  }
}

function checkTransport(at: PropertyKey[], server: Record<string, unknown>, report: Report): void {
  const transport = resolveTransport(server);
  if (transport === undefined) {
    // Windsurf's mcp_config.json names a remote server's URL serverUrl.
    if (server['type'] === undefined && server['serverUrl'] !== undefined) {
      report([...at, 'serverUrl'], 'is written "url" here (serverUrl is Windsurf\'s name for it)');
    } else if (server['type'] === undefined) report(at, 'needs "command" (a stdio server) or "url" (an http or sse server)');
    return;
  }
  const [required, forbidden] = transport === 'stdio' ? (['command', REMOTE_ONLY] as const) : (['url', STDIO_ONLY] as const);
  const kind = transport === 'stdio' ? 'a stdio server' : `an ${transport} server`;
  if (server[required] === undefined) report([...at, required], `is required for ${kind}`);
  for (const key of forbidden) {
    if (server[key] !== undefined) report([...at, key], `is not allowed on ${kind}`);
  }
}

interface RequestLimits {
  requestMs: number;
  maxRequestMs: number;
}

function topTimeouts(raw: unknown): RequestLimits {
  const t = isRecord(raw) ? raw : {};
  return {
    requestMs: millis(t['requestMs']) ?? DEFAULT_TIMEOUTS.requestMs,
    maxRequestMs: millis(t['maxRequestMs']) ?? DEFAULT_TIMEOUTS.maxRequestMs,
  };
}

/** Only a server that overrides one of the two can break the rule on its own; else it inherits a checked pair. */
function checkServerTimeouts(at: PropertyKey[], raw: unknown, top: RequestLimits, report: Report): void {
  if (!isRecord(raw)) return;
  const requestMs = millis(raw['requestMs']);
  const maxRequestMs = millis(raw['maxRequestMs']);
  if (requestMs === undefined && maxRequestMs === undefined) return;
  const merged = { requestMs: requestMs ?? top.requestMs, maxRequestMs: maxRequestMs ?? top.maxRequestMs };
  if (merged.maxRequestMs >= merged.requestMs) return;
  if (maxRequestMs !== undefined) {
    report([...at, 'timeouts', 'maxRequestMs'], `must be at least requestMs (${merged.requestMs})`);
  } else {
    report([...at, 'timeouts', 'requestMs'], `must not exceed the top-level timeouts.maxRequestMs (${merged.maxRequestMs})`);
  }
}

/** A valid timeout, or undefined when absent or invalid (the schema reports invalid ones). */
function millis(value: unknown): number | undefined {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_TIMER_MS ? (value as number) : undefined;
}
