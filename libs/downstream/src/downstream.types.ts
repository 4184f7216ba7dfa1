import type { GatewayConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import type { GatewayDispatcher, SessionDirectory } from '@switchboard/relay';
import type { AuthPrincipal } from '@switchboard/auth';
import type { RefusalListener, RequestAuthenticator } from './http/request-guard.js';

/** What every downstream transport needs; the app supplies it. */
export interface DownstreamDeps {
  dispatcher: GatewayDispatcher;
  sessions: SessionDirectory;
  config: () => GatewayConfig;
  logger: Logger;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
  /** Told of every request the Host/Origin check or authentication refuses (the audit log records them). */
  onRefused?: RefusalListener;
  /** Who a request is from; absent, every caller is the anonymous loopback principal. */
  authenticate?: RequestAuthenticator;
  /**
   * Whether the credential a session was opened with still holds (a key not revoked, a
   * token not expired). Each request is authenticated anew; this is for what outlives one:
   * a session whose credential no longer holds is ended, and its streams with it.
   */
  stillValid?: (principal: SessionOwner) => boolean;
}

/** A session's principal as the credential check sees it (the object authentication made). */
export type SessionOwner = Pick<AuthPrincipal, 'id' | 'credential'>;
