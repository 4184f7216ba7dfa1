import type { CancelSignal, RequestId } from '@switchboard/core';
import type { DownstreamSession } from '../session.js';

/**
 * What the forwarder attaches to each request it sends upstream (PeerRequestOptions.origin),
 * so that a question the upstream asks while answering it goes back to the same host.
 */
export interface RelayOrigin {
  session: DownstreamSession;
  /** The host's own id of the request that caused it: the relay travels on its stream. */
  requestId: RequestId;
  /** Aborted when that request is cancelled, its session ends, or its call upstream ends. */
  signal?: CancelSignal;
}

export function isRelayOrigin(value: unknown): value is RelayOrigin {
  return typeof value === 'object' && value !== null && 'session' in value && 'requestId' in value;
}
