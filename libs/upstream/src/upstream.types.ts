import type { JsonRpcNotification, JsonRpcRequest, InboundContext } from '@switchboard/core';

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
}

export interface UpstreamListener {
  stateChanged?(server: string, state: UpstreamState, previous: UpstreamState): void;
  notification?(server: string, notification: JsonRpcNotification): void;
}

/** Answers the requests an upstream sends to the gateway (roots, sampling, elicitation). */
export type ServerRequestHandler = (
  server: string,
  request: JsonRpcRequest,
  ctx: InboundContext,
) => Promise<Record<string, unknown>>;

export interface ClientIdentity {
  name: string;
  version: string;
}
