import type { AuditQuery } from '@switchboard/audit';
import type { GatewayConfig } from '@switchboard/config';
import type { RefusalListener, RequestAuthenticator } from '@switchboard/downstream';

/** What the admin API needs from the daemon. */
export interface AdminOptions {
  /** Reads the daemon's audit database; undefined when `audit.enabled` is false. */
  auditQuery?: AuditQuery;
  /** The config in force now (it changes on reload): Host/Origin rules come from it. */
  config: () => GatewayConfig;
  /** Told of every request the Host/Origin check refuses (the audit log records them). */
  onRefused?: RefusalListener;
  /** Who a request is from; absent, every caller is the anonymous loopback principal. */
  authenticate?: RequestAuthenticator;
}

export const ADMIN_OPTIONS = Symbol('ADMIN_OPTIONS');
