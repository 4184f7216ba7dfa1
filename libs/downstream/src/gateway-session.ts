import { JsonRpcPeer, type JsonRpcMessage, type LogLevel, type PeerRequestOptions, type RequestId, type SendOptions } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import { shapeNotification, type DownstreamSession, type GatewayDispatcher, type Principal } from '@switchboard/relay';

type Item = Record<string, unknown>;

/** Where a session's outbound messages go; each transport supplies its own. */
export type OutboundChannel = (message: JsonRpcMessage, options?: SendOptions) => Promise<void>;

/**
 * One host connection. Inbound messages go through a JSON-RPC peer (which owns cancellation
 * of the host's requests and correlation of ours) into the transport-independent dispatcher.
 */
export class GatewaySession implements DownstreamSession {
  protocolVersion = '';
  clientInfo?: Item;
  clientCapabilities: Item = {};
  initialized = false;
  logLevel?: LogLevel;
  readonly peer: JsonRpcPeer;
  lastActivity = Date.now();
  /** Set by a transport that waits for responses: a request the host cancelled gets none. */
  onRequestCancelled?: (id: RequestId) => void;
  /** Set by a transport that may have no stream to the host (DownstreamSession.canReach). */
  canReach?: (relatedRequestId?: RequestId) => boolean;

  constructor(
    readonly id: string,
    readonly transport: DownstreamSession['transport'],
    private readonly channel: OutboundChannel,
    dispatcher: GatewayDispatcher,
    logger: Logger,
    readonly principal: Principal,
  ) {
    this.peer = new JsonRpcPeer(channel, {
      onRequest: (request, ctx) => dispatcher.handleRequest({ session: this, request, signal: ctx.signal }),
      onNotification: (n) => dispatcher.handleNotification(this, n),
      onRequestCancelled: (id) => this.onRequestCancelled?.(id),
      onInternalError: (err, request) =>
        logger.error({ err, method: request.method, session: id }, 'internal error while handling a request'),
    });
  }

  /** Every notification the relay sends a host passes here, and takes the shape of the host's revision. */
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    return this.channel(shapeNotification(message, this.protocolVersion), options);
  }

  request(method: string, params: Item | undefined, options?: PeerRequestOptions): Promise<Item> {
    return this.peer.request(method, params, options);
  }

  receive(message: JsonRpcMessage): void {
    this.lastActivity = Date.now();
    this.peer.handle(message);
  }
}
