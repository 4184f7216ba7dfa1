import { durationWords } from '@switchboard/core';
import { z } from 'zod';
import { auditSchema } from './config.schema.audit.js';
import { authSchema } from './config.schema.auth.js';
import { BYTES_TEXT, ITEMS_TEXT, intIn, listBytes, listItems, MAX_TIMER_MS, millis, NAMESPACE_MODES, nonEmpty } from './config.schema.fields.js';
import { serverMap } from './config.schema.servers.js';

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
 *                   redact: { defaults: true, keys: [], patterns: [], commands: [] } }  (docs/audit.md)
 *   mcpServers    name -> server (Claude Desktop / Cursor style)
 *   servers       the same (VS Code mcp.json style); only one of the two may appear
 *
 * A server's entry is in config.schema.servers.ts; the audit and auth sections in
 * config.schema.audit.ts and config.schema.auth.ts; the kinds of value several sections take
 * (timeouts, list limits, strings) in config.schema.fields.ts. The checks that compare one
 * setting with another are in config.rules.ts.
 *
 * Objects are strict so that unknown keys surface as issues; the loader turns those into
 * warnings rather than errors, because Claude Desktop and other hosts add keys of their own.
 */

const BRACKETED = /^\[.*\]$/;
/** Why `listen.host` (or --host) `[::1]` is refused. */
export const BRACKETED_HOST = 'an IPv6 address is written without brackets here (::1, not [::1])';

const LOG_LEVEL_NAMES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
const SEPARATOR_PATTERN = /^[A-Za-z0-9_.-]{1,4}$/;

export const DEFAULT_TIMEOUTS = {
  connectMs: 10_000,
  requestMs: 60_000,
  maxRequestMs: 600_000,
  shutdownMs: 10_000,
  sessionIdleMs: 3_600_000,
};

/** How long a host (or the inbox) has to answer an upstream's question, when the file does not say. */
export const DEFAULT_RELAY_TIMEOUT_MS = 300_000;

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

/**
 * A duration an approver may choose to remember an approval for. Whole seconds, at least one:
 * the choices are labelled in words ("For 15 minutes"), and anything else was labelled
 * wrongly ("For 0 seconds" for 500, "For 2 seconds" for 1500, two choices of one label); a
 * value under a second is also one no repeated call would find remembered, and is nearly
 * always seconds written for milliseconds (900 for 15 minutes).
 */
const REMEMBER_MAX_MS = Math.floor(MAX_TIMER_MS / 1000) * 1000;
const REMEMBER_REASON = `must be whole seconds in milliseconds, from 1000 (1 second) to ${REMEMBER_MAX_MS} (900000 is 15 minutes)`;
const rememberDuration = () =>
  z
    .int({ error: REMEMBER_REASON })
    // One reason per value: a value out of range is not also told it is no multiple.
    .min(1000, { error: REMEMBER_REASON, abort: true })
    .max(REMEMBER_MAX_MS, { error: REMEMBER_REASON, abort: true })
    .multipleOf(1000, { error: REMEMBER_REASON });

/**
 * Each duration is one choice on the approval form and in the inbox, labelled in words: one
 * listed twice was offered twice under one label. Each repeat is refused where it stands,
 * naming its value and where it was first. Runs once every value is a duration.
 */
function refuseRepeats(values: number[], ctx: z.RefinementCtx): void {
  const first = new Map<number, number>();
  values.forEach((ms, at) => {
    const earlier = first.get(ms);
    if (earlier === undefined) first.set(ms, at);
    else ctx.addIssue({ code: 'custom', path: [at], input: ms, message: `repeats ${ms} (${durationWords(ms)}) of approvals.rememberMs.${earlier}; list each duration once` });
  });
}

const bucketSchema = z
  .strictObject({
    points: intIn(1, 1_000_000, 'must be an integer from 1 to 1000000').describe('Requests allowed per window.'),
    durationSec: intIn(1, 86_400, 'must be an integer from 1 to 86400').describe('The window, in seconds.'),
  })
  .describe('A token bucket: points requests per durationSec.');

export const configInputSchema = z
  .strictObject(
    {
      $schema: z.string().optional().describe('Editor hint: where switchboard.schema.json is. Ignored.'),
      listen: z
        .strictObject({
          host: nonEmpty()
            // A URL writes an IPv6 address in brackets; an address to bind does not, and
            // `[::1]` would fail only at start, as a host name not found.
            .refine((host) => !BRACKETED.test(host), { error: BRACKETED_HOST })
            .default('127.0.0.1')
            .describe('Address to bind; keep loopback unless auth is configured.'),
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
          allowedHosts: z.array(nonEmpty()).default([]).describe('Host header values accepted: on a loopback listener besides loopback names; on any other address only these (empty: any Host).'),
          allowedOrigins: z.array(nonEmpty()).default([]).describe('Origin header values accepted from browsers.'),
        })
        .prefault({}),
      log: z
        .strictObject({
          level: z.enum(LOG_LEVEL_NAMES).default('info'),
          format: z
            .enum(['auto', 'json', 'text'])
            .default('auto')
            .describe('text: one readable line per entry; json: pino JSON lines (for log shippers); auto: text when stderr is a terminal, else json.'),
        })
        .prefault({}),
      auth: authSchema.prefault({}),
      policy: z
        .strictObject({
          file: nonEmpty().optional().describe("Policy file (docs/policy.md); relative to the config file's directory. Reloaded when it changes."),
          defaultEffect: z
            .enum(['allow', 'deny'])
            .optional()
            .describe('Without a matching rule. Default: allow on a loopback listener with auth.mode none, deny otherwise.'),
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
          perPrincipalConcurrency: intIn(1, 100_000, 'must be an integer from 1 to 100000')
            .optional()
            .describe("Calls in flight per principal and upstream, so one caller cannot take all of an upstream's upstreamConcurrency; more are refused."),
          sessionsPerPrincipal: intIn(1, 1_000_000, 'must be an integer from 1 to 1000000')
            .default(DEFAULT_SESSIONS_PER_PRINCIPAL)
            .describe("Streamable HTTP sessions one caller may hold, and as many HTTP+SSE sessions. At the limit a new initialize ends the caller's longest-idle Streamable HTTP session, or is refused (429) when every one is busy; a new /sse stream is refused (429)."),
        })
        .prefault({}),
      relay: z
        .strictObject({
          timeoutMs: millis().default(DEFAULT_RELAY_TIMEOUT_MS).describe('How long a host (its user) has to answer a relayed sampling, elicitation or roots request.'),
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
            .array(rememberDuration())
            .max(8, { error: 'offer at most 8 durations' })
            .superRefine(refuseRepeats)
            // What refuseRepeats refuses, for editors.
            .meta({ uniqueItems: true })
            .default([900_000, 3_600_000, 28_800_000])
            .describe('The durations an approver may choose to remember an approval for (same principal, tool, arguments and policy), in milliseconds of whole seconds, at least 1000, each once; [] offers none.'),
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

/** JSON Schema of the input format, for editors; config/switchboard.schema.json is this. */
export function configJsonSchema(): object {
  return z.toJSONSchema(configInputSchema, { io: 'input', target: 'draft-2020-12' });
}
