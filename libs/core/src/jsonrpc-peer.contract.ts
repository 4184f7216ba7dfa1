import type { CancelSignal } from './cancellation.js';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId } from './jsonrpc.js';

/*
 * What a JsonRpcPeer is given and gives (jsonrpc-peer.ts): its channel, the options of a
 * request of its own, and the handlers of the other side's messages.
 */

export interface SendOptions {
  /** The inbound request this message belongs to (lets HTTP transports pick the stream). */
  relatedRequestId?: RequestId;
}

export type SendFn = (message: JsonRpcMessage, options?: SendOptions) => Promise<void>;

export interface PeerRequestOptions {
  /** Idle timeout: reset by every progress notification for this request. */
  timeoutMs?: number;
  /** Hard maximum, whatever progress arrives. */
  maxTotalMs?: number;
  /**
   * The idle timeout waits while the other side asks a question of its own about this
   * request (one its transport related to it, or one the handler attributed to it with
   * `InboundContext.about`): it is waiting for us then, perhaps for a person, not idle. A
   * question about no request, or about another one, does not touch it. The hard maximum
   * still holds.
   */
  waitWhileAsked?: boolean;
  /** Called with each `notifications/progress` params for this request (token already ours). */
  onProgress?: (params: Record<string, unknown>) => void;
  /**
   * Progress for this request's token keeps reaching `onProgress` after its answer, until
   * this signal aborts: a task-augmented request (2025-11-25 tasks) is answered at once with
   * the task, and its receiver goes on sending progress under the request's token until the
   * task ends.
   */
  progressUntil?: CancelSignal;
  /**
   * Called with the result as the answer is handled, before any later message from the other
   * side is: what must be known by then (a task-augmented request's task, which progress and
   * status sent right after the answer, in the same chunk of a stdio pipe, are about) cannot
   * wait for the returned promise, whose continuation runs only after that chunk was handled.
   */
  onAnswer?: (result: Record<string, unknown>) => void;
  /** Aborting abandons the request and tells the other side with `notifications/cancelled`. */
  signal?: CancelSignal;
  relatedRequestId?: RequestId;
  /**
   * Whatever the caller wants to find again while the request is pending (the gateway keeps
   * the downstream request that caused it, to route the server's questions back).
   */
  origin?: unknown;
}

/** What the transport knows about an incoming message. */
export interface MessageExtra {
  /** The request of ours whose response stream carried it (Streamable HTTP). */
  relatedRequestId?: RequestId;
}

export interface InboundContext {
  /** Aborted when the other side cancels the request (or the peer closes). */
  signal: CancelSignal;
  /** See MessageExtra. */
  relatedRequestId?: RequestId;
  /**
   * Says which requests of ours this question is about (replacing what was said before):
   * their idle timeouts wait while it is unanswered, and start again when it is (see
   * PeerRequestOptions.waitWhileAsked). Until called, it is about `relatedRequestId`, or
   * about none when the transport did not say.
   */
  about?(ids: RequestId[]): void;
}

export interface PeerHandlers {
  onRequest(request: JsonRpcRequest, ctx: InboundContext): Promise<Record<string, unknown>>;
  onNotification(notification: JsonRpcNotification): void;
  /** Errors that are not `McpError`: the client gets -32603, the log gets the detail. */
  onInternalError?(error: unknown, request: JsonRpcRequest): void;
  /**
   * The other side cancelled one of its requests: it will get no response (the spec), so a
   * transport that waits for one (an HTTP POST, a batch) must stop waiting for it.
   */
  onRequestCancelled?(id: RequestId): void;
}
