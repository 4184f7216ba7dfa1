import type { NamespaceMode } from '@switchboard/core';

/** Timeouts, all in milliseconds. Per-server values override the top-level ones. */
export interface Timeouts {
  /** Connecting and the initialize handshake with an upstream. */
  connectMs: number;
  /** Idle time allowed per request; every progress notification resets it. */
  requestMs: number;
  /** Hard maximum per request, whatever progress arrives. */
  maxRequestMs: number;
}

/**
 * What the gateway keeps of one list (tools, prompts, resources, resource templates) of one
 * upstream: the items in the upstream's order until one would pass either limit. Per-server
 * values override the top-level ones.
 */
export interface ListLimits {
  maxItems: number;
  /** Summed over the entries' JSON, in UTF-8 bytes. */
  maxBytes: number;
}

interface ServerCommon {
  /** The key in `mcpServers`. */
  name: string;
  /** Replaces the server name as the prefix of its tools and prompts. */
  alias?: string;
  /** Overrides the top-level namespace mode for this server. */
  namespace?: NamespaceMode;
  timeouts: Timeouts;
  lists: ListLimits;
  /** `disabled: true` keeps the entry in the file without starting it. */
  enabled: boolean;
  /** Tool-definition pinning (docs/policy.md#tool-pinning). */
  pin: 'strict' | 'warn' | 'off';
  /**
   * `per-session`: each downstream session gets a connection of its own (stateful servers).
   * `per-principal`: each principal gets a connection of their own, opened with their own
   * secrets (`${secret:NAME}` in env or headers; docs/isolation.md).
   */
  isolation: 'shared' | 'per-session' | 'per-principal';
  /**
   * Roots pinned in the config: the gateway answers the server's roots/list with exactly
   * these and never asks a host (docs/relay.md#pinned-roots). Absent: roots come from hosts.
   */
  roots?: PinnedRoot[];
}

/** One root as roots/list gives it: a file:// URI, and a name to show. */
export interface PinnedRoot {
  uri: string;
  name?: string;
}

export interface StdioServerConfig extends ServerCommon {
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Resolved against the config file's directory. */
  cwd?: string;
}

export interface RemoteServerConfig extends ServerCommon {
  /** `http`: Streamable HTTP, falling back to HTTP+SSE as the spec describes; `sse`: HTTP+SSE only. */
  transport: 'http' | 'sse';
  url: string;
  headers: Record<string, string>;
}

export type ServerConfig = StdioServerConfig | RemoteServerConfig;

export interface GatewayConfig {
  /** Absolute path of the file this came from. */
  source: string;
  listen: { host: string; port: number };
  /** Absolute path of the data directory (SQLite and other state). */
  dataDir: string;
  namespace: NamespaceMode;
  separator: string;
  /** Items per page of the merged lists. */
  pageSize: number;
  /** The servers' defaults; each server's `lists` holds what applies to it. */
  lists: ListLimits;
  timeouts: Timeouts & {
    /** How long SIGTERM waits for in-flight calls before stopping the upstreams. */
    shutdownMs: number;
    /** A Streamable HTTP session with no traffic and no open stream for this long is ended. */
    sessionIdleMs: number;
  };
  security: {
    /** Host header values accepted (besides loopback names, which are always accepted on loopback). */
    allowedHosts: string[];
    /** Origin header values accepted; requests without Origin are not browser requests and pass. */
    allowedOrigins: string[];
  };
  log: { level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent'; format: 'auto' | 'json' | 'text' };
  auth: AuthConfig;
  policy: PolicyConfig;
  rateLimits: RateLimitsConfig;
  relay: RelayConfig;
  approvals: ApprovalsConfig;
  audit: AuditConfig;
  /** In config-file order, disabled ones included. */
  servers: ServerConfig[];
}

/** Calls a `confirm` rule holds until a human approves them (docs/approvals.md). */
export interface ApprovalsConfig {
  /** How long a human has to answer. */
  timeoutMs: number;
  /** The durations an approver may choose to remember an approval for. */
  rememberMs: number[];
}

/** The upstreams' own requests, relayed to hosts (docs/relay.md). */
export interface RelayConfig {
  /** How long a host has to answer. */
  timeoutMs: number;
  /** Cap on a relayed sampling request's maxTokens. */
  maxSamplingTokens: number;
  /** Elicitations no host can take wait in the web inbox. */
  inbox: boolean;
}

export interface ConfigProblem {
  file: string;
  /** Dotted path inside the file, e.g. `mcpServers.github.url`; empty for the whole file. */
  path: string;
  reason: string;
}

/** Who may do what (docs/policy.md). */
export interface PolicyConfig {
  /** Absolute path of the policy file; absent, only the default effect applies. */
  file?: string;
  /** Absent: allow on a loopback listener, deny on any other. A policy file's own defaultEffect wins. */
  defaultEffect?: 'allow' | 'deny';
}

/** A token bucket: `points` requests per `durationSec` window. */
export interface BucketConfig {
  points: number;
  durationSec: number;
}

/** Rate limits (docs/rate-limits.md); every one is optional, and absent means no limit. */
export interface RateLimitsConfig {
  perPrincipal?: BucketConfig;
  perPrincipalServer?: BucketConfig;
  perPrincipalTool?: BucketConfig;
  /** Calls in flight per upstream, across all principals. */
  upstreamConcurrency?: number;
  /** Calls in flight per principal and upstream: one caller cannot take all of upstreamConcurrency. */
  perPrincipalConcurrency?: number;
  /** Streamable HTTP sessions one caller may hold at once (1000 unless set). */
  sessionsPerPrincipal: number;
}

/** Who may call (docs/auth.md). */
export interface AuthConfig {
  /** `required`: every HTTP request needs a credential. `none`: allowed only on a loopback listener. */
  mode: 'none' | 'required';
  /** Named in the RFC 9728 protected-resource metadata (the JWT issuer is added). */
  authorizationServers: string[];
  /** JWT bearer tokens from one OIDC issuer; absent, only API keys are accepted. */
  jwt?: JwtConfig;
}

export interface JwtConfig {
  issuer: string;
  audience: string;
  jwksUrl: string;
  algorithms: string[];
  clockToleranceSec: number;
  /** Only tokens whose `typ` header is `at+jwt` (RFC 9068); otherwise also none and `JWT`. */
  requireAtJwt: boolean;
  /** Tokens whose `exp` is further away than this (plus the clock tolerance) are refused. */
  maxTokenLifetimeSec: number;
  /** Claim paths: dots for nested claims; at each level the longest key the path starts with (so a key may hold dots). */
  claims: { principal: string; roles: string; groups: string };
}

/** The audit log (docs/audit.md). */
export interface AuditConfig {
  enabled: boolean;
  /** strict: answers wait for the commit holding their row; relaxed: rows commit within flushMs. */
  mode: 'strict' | 'relaxed';
  /** normal: a commit survives a killed process; full: also a power cut (an fsync per commit). */
  synchronous: 'normal' | 'full';
  flushMs: number;
  maxQueuedRows: number;
  /** `90d`, `12h`, `30m`, `2w`, or `off`. */
  retention: string;
  /** `1h`, `30s`, `1d`, or `off`: how often the chain's head is logged as a checkpoint (durationMs with AUDIT_CHECKPOINT_EVERY). */
  checkpointEvery: string;
  maxArgumentBytes: number;
  /** Whether completion/complete requests are recorded. */
  completions: boolean;
  redact: { defaults: boolean; keys: string[]; patterns: string[]; commands: string[] };
}
