/**
 * One audit row: one decision about one request. Rows are appended, never updated; each
 * carries the hash of the row before it, so an edited, inserted or deleted row shows up in
 * `switchboard audit verify`.
 */

/**
 * What was decided. `allowed`: the request went to its upstream (the outcome says how it
 * ended). The rest never reached one: `denied` (a policy or the catalog said no), `limited`
 * (rate limit), `unauthenticated`, `refused` (the gateway could not take it: shutting
 * down, audit log unavailable, Host/Origin check).
 */
export type AuditDecision = 'allowed' | 'denied' | 'limited' | 'unauthenticated' | 'refused';

/**
 * `tool_error`: the tool ran and reported failure (isError: true); `error`: a JSON-RPC error;
 * `cancelled`: the host got no answer, because it cancelled the request
 * (notifications/cancelled) or its connection went away first; `task`: a task-augmented
 * tools/call the upstream accepted as a task (2025-11-25), whose own outcome is the row of
 * the tasks/result that fetched it.
 */
export type AuditOutcome = 'ok' | 'tool_error' | 'error' | 'cancelled' | 'task';

/** The fields the gateway supplies; id and hashes are assigned when the row is committed. */
export interface AuditEntry {
  /** Epoch milliseconds when the request arrived. */
  at: number;
  principal: string;
  /** How the principal was established: loopback, stdio, api-key, jwt, ... */
  authMethod: string;
  sessionId: string | null;
  transport: string | null;
  clientName: string | null;
  clientVersion: string | null;
  protocolVersion: string | null;
  upstream: string | null;
  method: string;
  /** The name the host used: a tool or prompt name, a resource URI, a completion ref. */
  name: string | null;
  /** The upstream's own name for it. */
  originalName: string | null;
  /** Redacted, size-capped JSON text of the arguments. */
  arguments: string | null;
  argumentsTruncated: boolean;
  /** Digest of the full, unredacted arguments (canonical JSON), to match a known call. */
  argumentsDigest: string | null;
  decision: AuditDecision;
  /** The rule that made the decision, e.g. a policy rule's id, `policy:default-deny`, `catalog:unknown-tool`. */
  rule: string | null;
  outcome: AuditOutcome | null;
  errorCode: number | null;
  /** Redacted and capped; never a stack trace. */
  errorMessage: string | null;
  latencyMs: number | null;
  responseBytes: number | null;
  requestId: string | null;
  traceId: string | null;
}

export interface AuditRow extends AuditEntry {
  id: number;
  prevHash: string;
  hash: string;
}

/** The hash a chain starts from: no row before the first. */
export const GENESIS_HASH = '0'.repeat(64);

/** Filters shared by the CLI (`export`, `stats`, `tail`) and GET /admin/api/audit. */
export interface AuditFilter {
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  principal?: string;
  /** Matches the public or the original name of a tools/call. */
  tool?: string;
  decision?: AuditDecision;
  method?: string;
  upstream?: string;
  sessionId?: string;
  /** Rows with a greater id (for `tail -f` and cursors). */
  afterId?: number;
  /** Rows with a smaller id (descending cursors). */
  beforeId?: number;
}
