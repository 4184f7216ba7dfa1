/**
 * What a handler learns while it resolves a request, for its audit row: the upstream and
 * the upstream's own name once the catalog resolved them, or the rule that refused it.
 */
export interface AuditFacts {
  upstream: string | null;
  originalName: string | null;
  /** Set when the gateway itself refused: e.g. `catalog:unknown-tool`. Once set, the row is a denial, whatever the route. */
  deniedBy: string | null;
  /** Set when a rate limit refused it: e.g. `limit:principal-tool`. */
  limitedBy: string | null;
  /** The policy rule that allowed it, when a policy decided. */
  allowedBy: string | null;
  /** The `confirm` rule that allowed it only with a human's approval (gates/approval-gate.ts). */
  confirmBy: string | null;
  /** That rule's `approvers` (roles), when someone other than the caller must approve. */
  approvers: readonly string[] | null;
  /**
   * The trace id of its row (runAudited), for the rows it brings with it: its approval and the
   * questions its upstream asks while it runs, which an auditor can then join to it.
   */
  traceId: string | null;
  /** The row's name when the request does not carry it: a task's tool, for tasks/result and tasks/cancel. */
  name: string | null;
}

export const newAuditFacts = (): AuditFacts => ({
  upstream: null,
  originalName: null,
  deniedBy: null,
  limitedBy: null,
  allowedBy: null,
  confirmBy: null,
  approvers: null,
  traceId: null,
  name: null,
});
