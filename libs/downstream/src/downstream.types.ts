import type { GatewayConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import type { GatewayDispatcher, SessionDirectory } from '@switchboard/relay';
import type { AuthPrincipal, AuthRefusal } from '@switchboard/auth';
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
   * Why the credential a session was opened with no longer holds (a key revoked, expired or
   * deleted, a token expired), or undefined while it does. Each request is authenticated
   * anew; this is for what outlives one: a session whose credential lapsed is ended, its
   * streams, open answers and calls in flight with it.
   */
  credentialLapse?: (principal: SessionOwner) => CredentialLapse | undefined;
  /** Told of each session ended for its credential (the audit log records it). */
  onCredentialLapse?: (ended: CredentialLapseEnd) => void;
}

/** A session's principal as the credential check sees it (the object authentication made). */
export type SessionOwner = Pick<AuthPrincipal, 'id' | 'authMethod' | 'credential'>;

/** Why a session's credential no longer holds: the rule a request with it would be refused by, and why. */
export type CredentialLapse = Pick<AuthRefusal, 'rule' | 'reason'>;

/** A session ended because its credential lapsed. */
export interface CredentialLapseEnd extends CredentialLapse {
  sessionId: string;
  transport: string;
  principal: SessionOwner;
}
