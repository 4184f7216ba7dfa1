import { durationPattern, durationProblem, type DurationSetting } from '@switchboard/core';
import { z } from 'zod';

/*
 * The config file as written by people (YAML or JSON). Every key is optional; defaults are
 * filled in here, the rest of the normalising happens in config.normalize.ts.
 *
 *   $schema       editor hint only (path or URL of switchboard.schema.json); ignored
 *   listen        { host: '127.0.0.1', port: 8780 }; port 0 picks a free one
 *   dataDir       './data'; relative to the config file's directory
 *   namespace     prefix | auto | none: how tool and prompt names are prefixed (ADR 001)
 *   separator     '__'; between prefix and name; 1-4 of [A-Za-z0-9_.-]
 *   pageSize      250; items per page of the merged lists, 1..1000
 *   lists         { maxItems: 10000, maxBytes: 8388608 }: what the gateway keeps of each list
 *                 (tools, prompts, resources, resource templates) of each upstream
 *   timeouts      { connectMs: 10000, requestMs: 60000, maxRequestMs: 600000, shutdownMs: 10000,
 *                   sessionIdleMs: 3600000 }
 *   security      { allowedHosts: [], allowedOrigins: [] }
 *   log           { level: info }; trace | debug | info | warn | error | fatal | silent
 *   audit         { enabled: true, mode: strict, synchronous: normal, flushMs: 200, retention: 90d, checkpointEvery: 1h,
 *                   maxArgumentBytes: 8192, completions: true, maxQueuedRows: 100000,
 *                   redact: { defaults: true, keys: [], patterns: [] } }  (docs/audit.md)
 *   mcpServers    name -> server (Claude Desktop / Cursor style)
 *   servers       the same (VS Code mcp.json style); only one of the two may appear
 *
 * A server:
 *   type          stdio | http | streamable-http (= http) | sse; inferred from command/url if absent
 *   command       stdio: the program to run                       } ${NAME} and ${env:NAME} are
 *   args          stdio: its arguments                            } expanded in these six from
 *   env           stdio: extra environment variables              } the environment, and
 *   cwd           stdio: working directory, relative to the file  } ${NAME:-default}; $${ is a
 *   url           http/sse: the endpoint, http(s) only            } literal ${
 *   headers       http/sse: sent with every request               }
 *   alias         replaces the server name as the tool prefix, [A-Za-z0-9_-]{1,24}
 *   namespace     overrides the top-level namespace for this server
 *   timeouts      per-server connectMs / requestMs / maxRequestMs, merged over the top-level ones
 *   lists         per-server maxItems / maxBytes, merged over the top-level ones
 *   disabled      true keeps the entry without starting it
 *   isolation     shared (one connection for everyone) | per-session (one per downstream
 *                 session) | per-principal (one per user; env and headers may then use
 *                 ${secret:NAME}, the caller's own secret)
 *   roots         [{ uri: file://..., name? }]: the gateway answers the server's roots/list
 *                 with these itself, never asking a host
 *
 * Objects are strict so that unknown keys surface as issues; the loader turns those into
 * warnings rather than errors, because Claude Desktop and other hosts add keys of their own.
 */

/** setTimeout treats anything above 2^31-1 ms as 1 ms, so a "very long" timeout would fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

const LOG_LEVEL_NAMES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
const NAMESPACE_MODES = ['prefix', 'auto', 'none'] as const;
const SERVER_TYPES = ['stdio', 'http', 'streamable-http', 'sse'] as const;

export const SERVER_NAME_MAX = 64;
const ALIAS_PATTERN = /^[A-Za-z0-9_-]{1,24}$/;
const SEPARATOR_PATTERN = /^[A-Za-z0-9_.-]{1,4}$/;

export const DEFAULT_TIMEOUTS = {
  connectMs: 10_000,
  requestMs: 60_000,
  maxRequestMs: 600_000,
  shutdownMs: 10_000,
  sessionIdleMs: 3_600_000,
};

/**
 * Each session costs ~3 KB however idle; hosts that never send DELETE leave theirs for
 * `sessionIdleMs`. A thousand is more than any person's hosts hold, and bounds one
 * credential's share of the daemon's memory to a few MB.
 */
export const DEFAULT_SESSIONS_PER_PRINCIPAL = 1_000;

/**
 * What the gateway keeps of one list of one upstream; the rest is left out (docs/performance.md
 * #catalog-size has the measurements). 10,000 items is 100 times the tools of GitHub's MCP
 * server and room for a resource server's thousands of files; it costs the daemon about
 * 10 MiB and a host 60-80 ms to list. 8 MiB of entries (four times the largest real tool
 * list we know, 10,000 entries of 840 bytes, or seven of a megabyte) cost it about 40 MiB
 * idle and 110 MiB at peak. Unbounded, 300,000 tools took 700 MiB and a million left the
 * daemon unresponsive.
 */
const DEFAULT_LIST_LIMITS = { maxItems: 10_000, maxBytes: 8 * 1024 * 1024 };

const MAX_LIST_ITEMS = 1_000_000;
const MIN_LIST_BYTES = 1024;
const MAX_LIST_BYTES = 1024 * 1024 * 1024;

const intIn = (min: number, max: number, reason: string) =>
  z.int({ error: reason }).min(min, { error: reason }).max(max, { error: reason });

const millis = () => intIn(1, MAX_TIMER_MS, `must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`);

/** YAML reads `3000` and `true` as a number and a boolean; say how to get a string. */
const text = () => z.string({ error: 'must be a string (quote numbers and booleans)' });
const nonEmpty = () => z.string().min(1, { error: 'must not be empty' });

/**
 * An env value. VS Code writes null to take a variable out of the inherited environment; a
 * stdio upstream inherits only a few (HOME, PATH, ...) here, so the entry can simply go.
 */
const envValue = () =>
  z.string({
    error: (issue) =>
      issue.input === null
        ? 'must be a string; to keep a variable from the server, leave it out (a stdio server inherits only a few variables: HOME, PATH, ...)'
        : 'must be a string (quote numbers and booleans)',
  });

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol, hostname } = new URL(value);
  return (protocol === 'http:' || protocol === 'https:') && hostname !== '';
}

/** The spec's roots are file:// URIs only. */
function isFileUri(value: string): boolean {
  return value.startsWith('file://') && URL.canParse(value);
}

/**
 * `audit.retention`: rows older than this are pruned. Zero (`0d`) would have every hourly
 * run delete all but the newest row: almost certainly a mistake for `off`, which keeps every
 * row, so it is refused. So is anything under an hour: `30s` is one key from `30d`, and the
 * first run, a minute after start, would delete all history but that last minute, for good,
 * while `audit verify` still passes. Short retentions above it are warned of (config.rules).
 */
export const AUDIT_RETENTION: DurationSetting = {
  name: 'audit.retention',
  example: '90d',
  off: 'keeps every row',
  zero: '(pruning would remove all but the newest row)',
  min: { at: '1h', why: '(pruning would delete nearly every row)' },
};

/**
 * `audit.checkpointEvery`: how often the daemon logs a checkpoint. Node's timers take at most
 * 2^31-1 ms (24.8 days) and fire at once beyond it; a week is plenty.
 */
export const AUDIT_CHECKPOINT_EVERY: DurationSetting = {
  name: 'audit.checkpointEvery',
  example: '1h',
  off: 'logs no checkpoints',
  max: '7d',
};

/** What the daemon reads for the two when the file leaves them out. */
export const AUDIT_DURATION_DEFAULTS = { retention: '90d', checkpointEvery: '1h' } as const;

/**
 * A setting that takes a duration (durationMs): its pattern is in the JSON schema for
 * editors; a value refused gets one reason, durationProblem's.
 */
const duration = (setting: DurationSetting) => {
  const pattern = durationPattern(setting);
  const reason = (issue: { input?: unknown }) => durationProblem(String(issue.input), setting);
  // Zod runs the refine after a failed regex too: it judges only a value of the right form (its longest).
  return text()
    .regex(pattern, { error: reason })
    .refine((value) => !pattern.test(value) || durationProblem(value, setting) === undefined, { error: reason });
};

/** A redaction pattern is a regex source, or /source/flags; it must compile. */
function compiles(pattern: string): boolean {
  const slashed = /^\/(.*)\/([a-z]*)$/s.exec(pattern);
  try {
    new RegExp(slashed ? slashed[1] : pattern, slashed ? slashed[2] : undefined);
    return true;
  } catch {
    return false;
  }
}

const bucketSchema = z
  .strictObject({
    points: intIn(1, 1_000_000, 'must be an integer from 1 to 1000000').describe('Requests allowed per window.'),
    durationSec: intIn(1, 86_400, 'must be an integer from 1 to 86400').describe('The window, in seconds.'),
  })
  .describe('A token bucket: points requests per durationSec.');

/** Asymmetric JWS algorithms only: a shared secret would have to be in the gateway's config. */
const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

const auditSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('false turns the audit log off (a warning is logged at start).'),
    mode: z
      .enum(['strict', 'relaxed'])
      .default('strict')
      .describe('strict: an answer is released only after its row is written to the journal (synchronous: normal) or committed (full); relaxed: rows are committed within flushMs.'),
    synchronous: z
      .enum(['normal', 'full'])
      .default('normal')
      .describe('normal: a committed row survives a killed process (kill -9), not a power cut; full: each commit is also fsynced, surviving power loss.'),
    flushMs: intIn(1, 60_000, 'must be a whole number of milliseconds from 1 to 60000')
      .default(200)
      .describe("The longest a row waits for its commit: relaxed mode, and strict mode's rows on their way from the journal."),
    maxQueuedRows: intIn(1000, 10_000_000, 'must be an integer from 1000 to 10000000')
      .default(100_000)
      .describe('Rows held in memory while the database cannot be written; beyond it they are counted as lost.'),
    retention: duration(AUDIT_RETENTION)
      .default(AUDIT_DURATION_DEFAULTS.retention)
      .describe("Rows older than this (at least 1h, or 'off') are pruned in the background; the hash chain stays verifiable."),
    checkpointEvery: duration(AUDIT_CHECKPOINT_EVERY)
      .default(AUDIT_DURATION_DEFAULTS.checkpointEvery)
      .describe("How often the daemon logs the audit chain's head as a checkpoint line (when rows were written since the last one), for `audit verify --checkpoint`; 'off' logs none."),
    maxArgumentBytes: intIn(0, 1_048_576, 'must be an integer from 0 to 1048576')
      .default(8192)
      .describe('Redacted arguments longer than this are cut; the digest covers the full arguments.'),
    completions: z.boolean().default(true).describe('Record completion/complete requests (they come at every keystroke in some hosts).'),
    redact: z
      .strictObject({
        defaults: z.boolean().default(true).describe('Apply the built-in secret patterns (docs/audit.md lists them).'),
        keys: z.array(nonEmpty()).default([]).describe('More key names whose values are replaced; /regex/flags allowed.'),
        patterns: z
          .array(z.string().refine(compiles, { error: 'must be a valid regular expression' }))
          .default([])
          .describe('More value patterns (regex source or /source/flags); every match is replaced.'),
      })
      .prefault({}),
  })
  .describe('The audit log of tool calls and refusals (docs/audit.md).');

const listItems = () => intIn(1, MAX_LIST_ITEMS, `must be an integer from 1 to ${MAX_LIST_ITEMS}`);
const listBytes = () => intIn(MIN_LIST_BYTES, MAX_LIST_BYTES, `must be an integer from ${MIN_LIST_BYTES} to ${MAX_LIST_BYTES}`);
const ITEMS_TEXT = 'Items kept of each list (tools, prompts, resources, resource templates) of an upstream; later ones are left out.';
const BYTES_TEXT = "Bytes (of the entries' JSON) kept of each list of an upstream; the entry that would pass it and later ones are left out.";

const serverLists = z
  .strictObject({
    maxItems: listItems().optional().describe(ITEMS_TEXT),
    maxBytes: listBytes().optional().describe(BYTES_TEXT),
  })
  .describe('Overrides of the top-level lists limits for this server.');

const serverTimeouts = z
  .strictObject({
    connectMs: millis().optional(),
    requestMs: millis().optional(),
    maxRequestMs: millis().optional(),
  })
  .describe('Overrides of the top-level timeouts for this server (milliseconds).');

const pinnedRoot = z
  .strictObject({
    uri: z
      .string()
      .refine(isFileUri, { error: 'must be a file:// URI (roots are file URIs)' })
      .describe('The root, a file:// URI.'),
    name: text().optional().describe('A name for it that hosts and servers may show.'),
  })
  .describe('A root given to the server as it is.');

const serverSchema = z
  .strictObject({
    type: z
      .enum(SERVER_TYPES)
      .optional()
      .describe('Transport. Absent: `command` means stdio, `url` means http. streamable-http is a synonym of http.'),
    command: nonEmpty().optional().describe('stdio: the program to run. ${NAME} and ${env:NAME} are expanded.'),
    args: z.array(text()).optional().describe('stdio: its arguments (expanded like command).'),
    env: z.record(z.string(), envValue()).optional().describe('stdio: extra environment variables (values expanded).'),
    cwd: nonEmpty().optional().describe("stdio: working directory, relative to the config file's directory."),
    url: z
      .string()
      .refine(isHttpUrl, { error: 'must be an http(s) URL' })
      .optional()
      .describe('http/sse: the endpoint URL (expanded).'),
    headers: z.record(z.string(), text()).optional().describe('http/sse: headers sent with every request (values expanded).'),
    alias: z
      .string()
      .regex(ALIAS_PATTERN, { error: 'must be 1 to 24 of A-Z a-z 0-9 _ -' })
      .optional()
      .describe('Prefix used instead of the server name for its tools and prompts.'),
    namespace: z.enum(NAMESPACE_MODES).optional().describe('Overrides the top-level namespace mode.'),
    timeouts: serverTimeouts.optional(),
    lists: serverLists.optional(),
    disabled: z.boolean().optional().describe('true keeps the entry without starting the server.'),
    isolation: z
      .enum(['shared', 'per-session', 'per-principal'])
      .optional()
      .describe(
        'shared (default): one connection serves everyone. per-session: one connection per downstream session, for stateful servers. per-principal: one connection per principal, so per-user credentials (${secret:NAME} in env or headers) never mix.',
      ),
    roots: z
      .array(pinnedRoot)
      .optional()
      .describe("The server's roots, answered by the gateway itself (hosts are never asked, nor told of their roots' changes)."),
    pin: z
      .enum(['strict', 'warn', 'off'])
      .optional()
      .describe('Tool-definition pinning: strict (default) holds back a changed tool until accepted; warn reports it; off.'),
  })
  .meta({ id: 'SwitchboardServer', description: 'One upstream MCP server.' });

const serverMap = () => z.record(z.string(), serverSchema);

export const configInputSchema = z
  .strictObject(
    {
      $schema: z.string().optional().describe('Editor hint: where switchboard.schema.json is. Ignored.'),
      listen: z
        .strictObject({
          host: nonEmpty().default('127.0.0.1').describe('Address to bind; keep loopback unless auth is configured.'),
          port: intIn(0, 65535, 'must be an integer from 0 to 65535').default(8780).describe('0 picks a free port.'),
        })
        .prefault({}),
      dataDir: nonEmpty().default('./data').describe("SQLite and other state; relative to the config file's directory."),
      namespace: z.enum(NAMESPACE_MODES).default('prefix').describe('How tool and prompt names are prefixed.'),
      separator: z
        .string()
        .regex(SEPARATOR_PATTERN, { error: 'must be 1 to 4 of A-Z a-z 0-9 _ . -' })
        .default('__')
        .describe('Between the server prefix and the tool name.'),
      pageSize: intIn(1, 1000, 'must be an integer from 1 to 1000').default(250).describe('Items per page of merged lists.'),
      lists: z
        .strictObject({
          maxItems: listItems().default(DEFAULT_LIST_LIMITS.maxItems).describe(ITEMS_TEXT),
          maxBytes: listBytes().default(DEFAULT_LIST_LIMITS.maxBytes).describe(BYTES_TEXT),
        })
        .prefault({})
        .describe('What the gateway keeps of each list of each upstream; servers may override it (docs/performance.md#catalog-size).'),
      timeouts: z
        .strictObject({
          connectMs: millis().default(DEFAULT_TIMEOUTS.connectMs).describe('Connect and initialize an upstream.'),
          requestMs: millis().default(DEFAULT_TIMEOUTS.requestMs).describe('Idle time per request; progress resets it.'),
          maxRequestMs: millis().default(DEFAULT_TIMEOUTS.maxRequestMs).describe('Hard limit per request; at least requestMs.'),
          shutdownMs: millis().default(DEFAULT_TIMEOUTS.shutdownMs).describe('How long shutdown waits for in-flight calls.'),
          sessionIdleMs: millis()
            .default(DEFAULT_TIMEOUTS.sessionIdleMs)
            .describe('A Streamable HTTP session with no traffic and no open stream for this long is ended.'),
        })
        .prefault({}),
      security: z
        .strictObject({
          allowedHosts: z.array(nonEmpty()).default([]).describe('Host header values accepted besides loopback names.'),
          allowedOrigins: z.array(nonEmpty()).default([]).describe('Origin header values accepted from browsers.'),
        })
        .prefault({}),
      log: z.strictObject({ level: z.enum(LOG_LEVEL_NAMES).default('info') }).prefault({}),
      auth: z
        .strictObject({
          mode: z
            .enum(['none', 'required'])
            .default('none')
            .describe('required: every HTTP request needs a credential (an API key); none: loopback listeners only.'),
          authorizationServers: z
            .array(z.url({ error: 'must be an absolute URL' }))
            .default([])
            .describe('OAuth authorization servers named in /.well-known/oauth-protected-resource (RFC 9728).'),
          jwt: z
            .strictObject({
              issuer: z.url({ error: 'must be an absolute URL' }).describe('The iss every token must carry.'),
              audience: nonEmpty().describe('The aud every token must carry (this gateway).'),
              jwksUrl: z
                .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
                .describe("Where the issuer's signing keys are (JWKS); fetched, cached, and refetched for an unknown key id."),
              algorithms: z
                .array(z.enum(JWT_ALGORITHMS))
                .min(1)
                .default(['RS256', 'ES256'])
                .describe('Signature algorithms accepted; none is never accepted.'),
              clockToleranceSec: intIn(0, 300, 'must be an integer from 0 to 300').default(30).describe('Leeway for exp and nbf.'),
              requireAtJwt: z
                .boolean()
                .default(false)
                .describe('true: only tokens whose typ header is at+jwt (RFC 9068). false: also none and JWT. Other kinds of JWT (dpop+jwt, logout+jwt, ...) are refused either way.'),
              maxTokenLifetimeSec: intIn(60, 31_536_000, 'must be an integer from 60 to 31536000 (a year)')
                .default(86_400)
                .describe('Tokens whose exp is further away than this many seconds (plus clockToleranceSec) are refused; default a day.'),
              claims: z
                .strictObject({
                  principal: nonEmpty().default('sub').describe('Claim naming the principal (dots for nested claims).'),
                  roles: nonEmpty().default('roles').describe('Claim with the roles: an array, or a space-separated string.'),
                  groups: nonEmpty().default('groups').describe('Claim with the groups: an array, or a space-separated string.'),
                })
                .prefault({}),
            })
            .optional()
            .describe('Accept JWT bearer tokens from one OIDC issuer, verified against its JWKS.'),
        })
        .prefault({}),
      policy: z
        .strictObject({
          file: nonEmpty().optional().describe("Policy file (docs/policy.md); relative to the config file's directory. Reloaded when it changes."),
          defaultEffect: z
            .enum(['allow', 'deny'])
            .optional()
            .describe('Without a matching rule. Default: allow on a loopback listener, deny on any other.'),
        })
        .prefault({}),
      rateLimits: z
        .strictObject({
          perPrincipal: bucketSchema.optional().describe('Recorded requests (tools/call, resources/read, prompts/get, completion/complete) per principal.'),
          perPrincipalServer: bucketSchema.optional().describe('The same, per principal and upstream.'),
          perPrincipalTool: bucketSchema.optional().describe('tools/call per principal and tool.'),
          upstreamConcurrency: intIn(1, 100_000, 'must be an integer from 1 to 100000')
            .optional()
            .describe('Calls in flight per upstream, all principals together; more are refused.'),
          sessionsPerPrincipal: intIn(1, 1_000_000, 'must be an integer from 1 to 1000000')
            .default(DEFAULT_SESSIONS_PER_PRINCIPAL)
            .describe("Streamable HTTP sessions one caller may hold, and as many HTTP+SSE sessions. At the limit a new initialize ends the caller's longest-idle Streamable HTTP session, or is refused (429) when every one is busy; a new /sse stream is refused (429)."),
        })
        .prefault({}),
      relay: z
        .strictObject({
          timeoutMs: millis().default(300_000).describe('How long a host (its user) has to answer a relayed sampling, elicitation or roots request.'),
          maxSamplingTokens: intIn(1, 1_000_000, 'must be an integer from 1 to 1000000')
            .default(4096)
            .describe("A relayed sampling request's maxTokens is capped to this."),
          inbox: z
            .boolean()
            .default(true)
            .describe('An elicitation no host can take waits for a human in the web inbox (/admin/inbox); false: the upstream is refused with -32602.'),
        })
        .prefault({})
        .describe("The upstreams' own requests (sampling, elicitation, roots), relayed to the host that caused them (docs/relay.md)."),
      approvals: z
        .strictObject({
          timeoutMs: millis()
            .default(120_000)
            .describe('How long a human has to approve a call a `confirm` rule holds; then the call fails with -32014.'),
          rememberMs: z
            .array(millis())
            .max(8, { error: 'offer at most 8 durations' })
            .default([900_000, 3_600_000, 28_800_000])
            .describe('The durations an approver may choose to remember an approval for (same principal, tool, arguments and policy); [] offers none.'),
        })
        .prefault({})
        .describe('Calls held by a policy rule with `confirm` until a human approves them (docs/approvals.md).'),
      audit: auditSchema.prefault({}),
      mcpServers: serverMap().optional().describe('Upstream servers by name (Claude Desktop / Cursor style).'),
      servers: serverMap().optional().describe('Synonym of mcpServers (VS Code mcp.json style); use only one.'),
    },
    { error: 'must be a mapping of settings (the file is empty or holds something else)' },
  )
  .meta({ title: 'Switchboard gateway configuration' });

export type ConfigInput = z.output<typeof configInputSchema>;
export type ServerInput = z.output<typeof serverSchema>;

/** JSON Schema of the input format, for editors; config/switchboard.schema.json is this. */
export function configJsonSchema(): object {
  return z.toJSONSchema(configInputSchema, { io: 'input', target: 'draft-2020-12' });
}
