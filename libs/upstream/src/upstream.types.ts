import type { CancelSignal, JsonRpcNotification, JsonRpcRequest } from '@switchboard/core';
import type { CutList } from './list-cap.js';
import type { UpstreamConnection } from './upstream-connection.js';

/**
 * - connecting: a connect attempt (spawn/initialize) is under way;
 * - ready: initialized and healthy;
 * - degraded: connected but a health check or list refresh failed; calls still go through;
 * - down: not connected, waiting to retry with backoff; calls fail fast;
 * - stopped: removed from config or shutting down.
 */
export type UpstreamState = 'connecting' | 'ready' | 'degraded' | 'down' | 'stopped';

export interface UpstreamStatus {
  name: string;
  transport: string;
  state: UpstreamState;
  since: string;
  protocolVersion?: string;
  serverInfo?: Record<string, unknown>;
  lastError?: string;
  reconnectAttempts: number;
  pid?: number;
  /** Lists cut at a limit (config `lists`) when last read; absent when none is. */
  truncatedLists?: CutList[];
  /**
   * Something about a connected upstream a person should look at, though it is no failure:
   * it declared none of the capabilities through which it could serve hosts anything.
   */
  warning?: string;
}

export interface UpstreamListener {
  stateChanged?(server: string, state: UpstreamState, previous: UpstreamState): void;
  notification?(server: string, notification: JsonRpcNotification): void;
}

/** A request an upstream sent to the gateway (roots, sampling, elicitation), with what may have caused it. */
export interface ServerRequest {
  connection: UpstreamConnection;
  request: JsonRpcRequest;
  /** Aborted when the upstream cancels it, or the connection closes. */
  signal: CancelSignal;
  /** True when the transport named the request that caused it: `candidates` is then that one. */
  related: boolean;
  /** The origins (PeerRequestOptions.origin) of the requests that may have caused it. */
  candidates: unknown[];
  /**
   * Says which of `candidates` it is about: their idle timeouts (timeouts.requestMs) wait
   * while it is unanswered. Until called it is about the related request, or, when the
   * transport did not name one, about none.
   */
  attribute(origins: unknown[]): void;
}

/** Answers the requests an upstream sends to the gateway. */
export type ServerRequestHandler = (request: ServerRequest) => Promise<Record<string, unknown>>;

export interface ClientIdentity {
  name: string;
  version: string;
}
