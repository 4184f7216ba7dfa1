import type { GatewayConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import type { GatewayDispatcher, SessionDirectory } from '@switchboard/relay';
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
}
