import { Cancellation, type CancelSignal, type RequestId } from '@switchboard/core';
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
  /** The trace id of that request's audit row: the question's row joins its trace. */
  traceId?: string;
}

export function isRelayOrigin(value: unknown): value is RelayOrigin {
  return typeof value === 'object' && value !== null && 'session' in value && 'requestId' in value;
}

/**
 * The origin of a question any of `origins` (requests of one session, in flight on a
 * connection that cannot say which asked) may have caused. It travels on the stream of the
 * first of them the host can still be reached on (the spec has a POST's stream carry
 * messages related to its request, and this one is related to one of them), and is
 * withdrawn only once every one of them has ended, since any of them may be waiting for it.
 */
export function sharedOrigin(origins: RelayOrigin[], reachable: (requestId: RequestId) => boolean): RelayOrigin {
  const carrier = origins.find((o) => reachable(o.requestId)) ?? origins[0];
  return { session: carrier.session, requestId: carrier.requestId, signal: allCancelled(origins.map((o) => o.signal)), traceId: carrier.traceId };
}

/** A signal aborted once every one of `signals` is; none when one of them cannot be. */
function allCancelled(signals: (CancelSignal | undefined)[]): CancelSignal | undefined {
  if (signals.some((s) => s === undefined)) return undefined;
  const all = new Cancellation();
  let left = signals.length;
  const ended = () => {
    left -= 1;
    if (left === 0) all.abort();
  };
  for (const signal of signals as CancelSignal[]) {
    if (signal.aborted) ended();
    else signal.addEventListener('abort', ended, { once: true });
  }
  return all;
}
