import { beVerb, counted } from '@switchboard/core';
import type { AuditEntry } from './audit.types.js';
import { CountedRows } from './counted-rows.js';
import { RefusalBudget, type RefusalBudgetOptions, type RefusalSample, type RefusalSummary } from './refusal-budget.js';
import { bareEntry } from './system-entry.js';
import { canonicalJson, canonicalTextDigest, type Redactor } from './redaction/index.js';
import type { AuditWriter } from './writer/audit-writer.js';

export interface AuditLogOptions {
  redactor: Redactor;
  maxArgumentBytes: number;
  /** Whether completion/complete is recorded. */
  completions: boolean;
  /** Keys the arguments digest (HMAC); see argumentsDigest. */
  digestKey?: Buffer;
  /**
   * How many HTTP refusals per client address, and relayed requests refused per upstream,
   * are recorded one by one (RefusalBudget).
   */
  refusals?: Partial<RefusalBudgetOptions>;
}

/** What an upstream's request that reached no host or person is about, as a summary row repeats it. */
interface UpstreamRefusalSample {
  method: string;
  decision: AuditEntry['decision'];
  rule: string;
}

/** 100 rows a minute per address: far above any real client's mistakes, far below a flood's. */
const REFUSALS_PER_WINDOW = 100;
const REFUSAL_WINDOW_MS = 60_000;
const REFUSAL_ADDRESSES = 10_000;

/** Methods with a row per request; the relayed server->client ones join with the relay. */
const RECORDED = new Set(['tools/call', 'resources/read', 'resources/subscribe', 'prompts/get', 'completion/complete', 'tasks/result', 'tasks/cancel']);

/**
 * Methods whose row names a resource URI (`name` and `original_name`; for completion/complete,
 * a ref/resource's template URI): a URI can carry a credential (`?access_token=…`) and is
 * seldom repeated, so it is scanned each time. Other names (tools, prompts) repeat, and are
 * looked up in the redactor's memory: a known name never holds a secret, but the name of an
 * unknown tool is whatever the host sent.
 */
const URI_NAMED = new Set(['resources/read', 'resources/subscribe', 'completion/complete']);

const MAX_ERROR_CHARS = 1000;

/**
 * The most a row keeps of each other text the host chose: a name, its request id, what its
 * client calls itself. Arguments have `maxArgumentBytes`; without a bound here a host could
 * send a 4 MiB `clientInfo.name` once and have it written into every row of its session
 * (10 calls grew the database by 118 MB).
 */
const MAX_HOST_TEXT_CHARS = 1000;

/**
 * `text` redacted and cut to `max` characters. Only twice `max` is scanned: the rest would be
 * cut anyway, and a secret that straddles `max` lies wholly in what is scanned.
 */
function redactedWithin(text: string, max: number, redact: (text: string) => string): string {
  return redact(text.length > 2 * max ? text.slice(0, 2 * max) : text).slice(0, max);
}

/**
 * What the request pipeline talks to: decides which requests are recorded, turns a draft
 * into a row (redacted, capped, digested) and hands it to the group-commit writer. Nothing
 * unredacted leaves this class.
 */
export class AuditLog {
  private readonly refusals: CountedRows<RefusalSample>;
  private readonly upstreamRefusals: CountedRows<UpstreamRefusalSample>;

  constructor(
    private readonly writer: AuditWriter,
    private readonly options: AuditLogOptions,
  ) {
    const budget = <S>() =>
      new RefusalBudget<S>({ perWindow: REFUSALS_PER_WINDOW, windowMs: REFUSAL_WINDOW_MS, maxAddresses: REFUSAL_ADDRESSES, ...options.refusals });
    this.refusals = new CountedRows(budget<RefusalSample>(), (entry) => this.note(entry), (summary) => this.summaryEntry(summary));
    this.upstreamRefusals = new CountedRows(budget<UpstreamRefusalSample>(), (entry) => this.note(entry), (summary) => this.upstreamSummaryEntry(summary));
  }

  get mode() {
    return this.writer.mode;
  }

  records(method: string): boolean {
    return RECORDED.has(method) && (method !== 'completion/complete' || this.options.completions);
  }

  /** Strict mode: throws AuditUnavailableError while rows cannot be committed. */
  assertWritable(): void {
    this.writer.assertWritable();
  }

  /**
   * A recorded request is about to run (go upstream): its row will follow, and strict
   * commits wait a few event-loop turns for it rather than commit without it. Pair each
   * call with a `record(..., true)`.
   */
  expectRow(): void {
    this.writer.expectRow();
  }

  /**
   * Completes `entry` from the request's raw arguments and error text (redacted, capped,
   * digested), redacts its names when they are resource URIs, and queues it; `expected` when
   * expectRow announced it. `entry` is filled in
   * place: it is the pipeline's own, and a copy of a 25-field object costs more than the
   * rest of this method.
   * Strict: resolves when the row is committed. Relaxed: at once.
   */
  record(entry: AuditEntry, args: unknown, error: string | null, expected = false): Promise<void> {
    // First, so that a row that fails to build is not waited for either.
    if (expected) this.writer.expectedRowDone();
    if (args === undefined) {
      entry.arguments = null;
      entry.argumentsTruncated = false;
      entry.argumentsDigest = null;
    } else {
      const full = canonicalJson(args);
      const redacted = this.options.redactor.redact(args);
      // The redactor hands back its input when nothing matched: one serialization then serves both.
      const text = redacted === args ? full : canonicalJson(redacted);
      const cut = cutUtf8(text, this.options.maxArgumentBytes);
      entry.arguments = cut;
      entry.argumentsTruncated = cut.length !== text.length;
      entry.argumentsDigest = canonicalTextDigest(full, this.options.digestKey);
    }
    const redactor = this.options.redactor;
    entry.errorMessage = error === null ? null : redactedWithin(error, MAX_ERROR_CHARS, redactor.redactText);
    const redactName = URI_NAMED.has(entry.method) ? redactor.redactText : redactor.redactName;
    // Called directly, not through a helper closure: this runs for every recorded request.
    const max = MAX_HOST_TEXT_CHARS;
    if (entry.name !== null) entry.name = redactedWithin(entry.name, max, redactName);
    if (entry.originalName !== null) entry.originalName = redactedWithin(entry.originalName, max, redactName);
    // The rest of the host's own words in a row: its request id and what it calls itself.
    if (entry.requestId !== null) entry.requestId = redactedWithin(entry.requestId, max, redactor.redactText);
    if (entry.clientName !== null) entry.clientName = redactedWithin(entry.clientName, max, redactor.redactName);
    if (entry.clientVersion !== null) entry.clientVersion = redactedWithin(entry.clientVersion, max, redactor.redactName);
    return this.writer.append(entry);
  }

  /** The digest a row of a request with these arguments holds (`arguments_digest`), keyed as the log keys it. */
  argumentsDigestOf(args: unknown): string {
    return canonicalTextDigest(canonicalJson(args), this.options.digestKey);
  }

  /** A value as the log would store it, for showing to people (an approval's arguments): the same redaction rules. */
  redact(value: unknown): unknown {
    return this.options.redactor.redact(value);
  }

  /**
   * An HTTP request refused before it became an MCP request: the Host/Origin check (a DNS
   * rebinding attempt, a misconfigured proxy; `refused`) or a missing or bad credential
   * (`unauthenticated`). Never awaited: the caller gets its 403 or 401 at once.
   */
  recordHttpRefusal(refusal: {
    httpMethod: string;
    path: string;
    decision: 'refused' | 'unauthenticated' | 'denied' | 'limited';
    rule: string;
    reason: string;
    principal?: { id: string; authMethod: string };
    /** The client's address: each gets its own budget of rows (RefusalBudget). */
    address?: string;
    userAgent?: string;
  }): void {
    const { httpMethod, path, decision, rule } = refusal;
    if (!this.refusals.admit(refusal.address ?? 'unknown', { httpMethod, path, decision, rule })) return;
    // Where it came from, in `arguments` (an HTTP refusal has no MCP arguments): what a SIEM
    // correlates failed sign-ins by. Redacted like any text: a User-Agent is the client's to write.
    const from = { ...(refusal.address !== undefined && { clientAddress: refusal.address }), ...(refusal.userAgent !== undefined && { userAgent: this.options.redactor.redactText(refusal.userAgent) }) };
    this.note(
      bareEntry({
        principal: refusal.principal?.id ?? 'anonymous',
        authMethod: refusal.principal?.authMethod ?? 'none',
        method: 'http',
        name: this.options.redactor.redactText(`${refusal.httpMethod} ${refusal.path}`).slice(0, 200),
        decision: refusal.decision,
        rule: refusal.rule,
        outcome: null,
        ...(Object.keys(from).length > 0 && { arguments: JSON.stringify(from) }),
        // What the JSON-RPC body of the 403, 401 or 429 says.
        errorCode: refusal.decision === 'limited' ? -31429 : -32600,
        errorMessage: this.options.redactor.redactText(refusal.reason).slice(0, MAX_ERROR_CHARS),
      }),
    );
  }

  /**
   * A session the gateway ended because the credential it was opened with no longer holds
   * (a key revoked, expired or deleted, a token expired): method `session`, name `ended`,
   * the rule a request with that credential now gets. One row a session, so unbounded only
   * as sessions are; never awaited.
   */
  recordCredentialLapse(ended: {
    /** Absent for what is no MCP session: the inbox's event stream (transport `inbox`). */
    sessionId?: string;
    transport: string;
    principal: { id: string; authMethod: string };
    rule: string;
    reason: string;
  }): void {
    this.note(
      bareEntry({
        principal: ended.principal.id,
        authMethod: ended.principal.authMethod,
        sessionId: ended.sessionId ?? null,
        transport: ended.transport,
        method: 'session',
        name: 'ended',
        decision: 'unauthenticated',
        rule: ended.rule,
        outcome: null,
        errorMessage: this.options.redactor.redactText(`the ${ended.sessionId === undefined ? 'inbox event stream' : 'session'} was ended: ${ended.reason}`).slice(0, MAX_ERROR_CHARS),
      }),
    );
  }

  /**
   * A session refused as it began, before any MCP message: `switchboard stdio` started with
   * a SWITCHBOARD_API_KEY that does not serve (method `session`, name `refused`). The
   * principal is the one known without trusting the key: the user who ran the process. One
   * row a process start, so not budgeted like HTTP refusals (a start costs its sender a process).
   */
  recordSessionRefused(refused: { transport: string; principal: { id: string; authMethod: string }; rule: string; reason: string }): void {
    this.note(
      bareEntry({
        principal: refused.principal.id,
        authMethod: refused.principal.authMethod,
        transport: refused.transport,
        method: 'session',
        name: 'refused',
        decision: 'unauthenticated',
        rule: refused.rule,
        outcome: null,
        errorMessage: this.options.redactor.redactText(refused.reason).slice(0, MAX_ERROR_CHARS),
      }),
    );
  }

  /**
   * Records the counts of refusals not recorded one by one, now: at shutdown, before the
   * writer closes, so that none goes unaccounted.
   */
  summarizeRefusals(): void {
    this.refusals.summarize();
    this.upstreamRefusals.summarize();
  }

  /**
   * The row of a request an upstream made that reached no host or person: turned down
   * (refused: no host to put it to, a method the gateway does not relay; denied: sampling
   * the policy does not allow) or answered by the gateway itself (pinned roots). It costs
   * the upstream nothing, so like an HTTP refusal it is bounded, per upstream; one sending
   * them in a loop made 2,000 rows a second. Past the first of a window it is counted into
   * the window's summary row instead, and this resolves at once. Otherwise as record().
   */
  recordUnrelayed(entry: AuditEntry, args: unknown, error: string | null): Promise<void> {
    const sample = { method: entry.method, decision: entry.decision, rule: entry.rule ?? 'unknown' };
    if (!this.upstreamRefusals.admit(entry.upstream ?? 'unknown', sample)) return Promise.resolve();
    return this.record(entry, args, error);
  }

  private upstreamSummaryEntry({ address, suppressed, since, until, sample, kinds, otherKinds }: RefusalSummary<UpstreamRefusalSample>): AuditEntry {
    const when = `${new Date(since).toISOString()} to ${new Date(until).toISOString()}`;
    return bareEntry({
      principal: 'switchboard',
      authMethod: 'internal',
      upstream: address,
      method: sample.method,
      decision: sample.decision,
      rule: 'audit:refusals-counted',
      outcome: null,
      errorMessage: `${counted(suppressed, 'more request')} from upstream '${address}' that reached no host or person, ${when}, ${beVerb(suppressed, 'past')} counted, not recorded one by one (the first ${this.upstreamRefusals.perWindow} of a window are): ${byKind(kinds, otherKinds, (s) => `${s.method} (${s.rule})`)}`,
    });
  }

  private summaryEntry({ address, suppressed, since, until, sample, kinds, otherKinds }: RefusalSummary): AuditEntry {
    const when = `${new Date(since).toISOString()} to ${new Date(until).toISOString()}`;
    return bareEntry({
      principal: 'switchboard',
      authMethod: 'internal',
      method: 'http',
      name: this.options.redactor.redactText(`${sample.httpMethod} ${sample.path}`).slice(0, 200),
      decision: sample.decision,
      rule: 'audit:refusals-counted',
      outcome: null,
      errorMessage: this.options.redactor
        .redactText(
          `${counted(suppressed, 'more HTTP refusal')} from ${address}, ${when}, ${beVerb(suppressed, 'past')} counted, not recorded one by one (the first ${this.refusals.perWindow} of a window are): ${byKind(kinds, otherKinds, (s) => `${s.httpMethod} ${s.path} (${s.rule})`)}`,
        )
        .slice(0, MAX_ERROR_CHARS),
    });
  }

  /** A row that is not about a request a host made (a pruning marker, say); never awaited. */
  note(entry: AuditEntry): void {
    try {
      void this.writer.append(entry).catch(() => undefined);
    } catch {
      // Closed (shutdown): a row of no request has nowhere to go, and must not fail its caller.
    }
  }

  status() {
    return this.writer.status();
  }

  /**
   * Commits every row queued now. Strict mode answers once a row is in the journal, and
   * relaxed at once; a reader in this process that must see every call answered so far
   * (the admin API) flushes first. Not while commits fail: a forced commit would hold the
   * event loop for the busy timeout and push the writer's own retry back, for nothing;
   * `pending` then says what a reader will not see yet.
   */
  flush(): Promise<void> {
    return this.writer.writable ? this.writer.flush() : Promise.resolve();
  }

  /** Rows answered but not yet in the database because commits fail, and why; undefined otherwise. */
  pending(): { rows: number; reason: string } | undefined {
    const status = this.writer.status();
    if (status.writable || status.queuedRows === 0) return undefined;
    return { rows: status.queuedRows, reason: status.failure ?? 'the audit log cannot be written' };
  }
}

/** The longest prefix of `text` within `maxBytes` of UTF-8, not splitting a surrogate pair. */
function cutUtf8(text: string, maxBytes: number): string {
  // Fast path: at most 3 bytes per UTF-16 unit, so short texts cannot be over the cap.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) return text;
  let lo = 0;
  let hi = Math.min(text.length, maxBytes);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (Buffer.byteLength(text.slice(0, mid)) <= maxBytes) lo = mid;
    else hi = mid - 1;
  }
  const code = text.charCodeAt(lo - 1);
  return code >= 0xd800 && code <= 0xdbff ? text.slice(0, lo - 1) : text.slice(0, lo);
}

/** `30 POST /mcp (auth:unknown-key), 1 GET /admin/api/audit (auth:revoked-key)`: what a summary counted, by kind. */
function byKind<S>(kinds: readonly { sample: S; count: number }[], otherKinds: number, words: (sample: S) => string): string {
  const listed = kinds.map(({ sample, count }) => `${count} ${words(sample)}`);
  if (otherKinds > 0) listed.push(`${otherKinds} of other kinds`);
  return listed.join(', ');
}
