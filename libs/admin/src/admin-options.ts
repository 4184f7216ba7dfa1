import type { AuditQuery } from '@switchboard/audit';
import type { AuthPrincipal } from '@switchboard/auth';
import type { GatewayConfig } from '@switchboard/config';
import type { RefusalListener, RequestAuthenticator } from '@switchboard/downstream';
import type { Inbox } from '@switchboard/inbox';

/** What the admin API needs from the daemon. */
export interface AdminOptions {
  /** Reads the daemon's audit database; undefined when `audit.enabled` is false. */
  auditQuery?: AuditQuery;
  /** Commits the rows the audit writer still holds, so that a page read next shows every call answered so far. */
  flushAudit?: () => Promise<void>;
  /** Rows the writer holds because commits fail (a page cannot show them yet), and why. */
  pendingAudit?: () => { rows: number; reason: string } | undefined;
  /** The config in force now (it changes on reload): Host/Origin rules come from it. */
  config: () => GatewayConfig;
  /** Told of every request the Host/Origin check refuses (the audit log records them). */
  onRefused?: RefusalListener;
  /**
   * Told of each inbox event stream ended because its credential no longer holds (the audit
   * log records it, as it does an MCP session ended so).
   */
  onCredentialLapse?: (ended: { principal: { id: string; authMethod: string }; rule: string; reason: string }) => void;
  /** Who a request is from; absent, every caller is the anonymous loopback principal. */
  authenticate?: RequestAuthenticator;
  /** The pending questions for humans that /admin/inbox shows; absent, those routes answer 404. */
  inbox?: Inbox;
  /** A caller's roles under the policy in force: who may answer an approval whose rule names approvers. */
  rolesOf?: (principal: AuthPrincipal) => readonly string[];
}

export const ADMIN_OPTIONS = Symbol('ADMIN_OPTIONS');

export { ADMIN_ROLE } from '@switchboard/core';
