import {
  ErrorCode,
  duplicateIdMessage,
  errorResponse,
  isRequest,
  isResponse,
  type JsonRpcMessage,
  type JsonRpcResponse,
  type RequestId,
  type SendOptions,
} from '@switchboard/core';

/** What BatchReplies hands a batch's messages to: a GatewaySession, in effect. */
export interface BatchTarget {
  readonly peer: { isHandling(id: RequestId): boolean };
  receive(message: JsonRpcMessage): void;
}

/** One batch's answer: the responses gathered so far and the requests still owed one. */
interface OpenBatch {
  waiting: Set<RequestId>;
  responses: JsonRpcResponse[];
}

/**
 * JSON-RPC batches (2025-03-26) on a transport with a single outbound stream: stdio and the
 * legacy HTTP+SSE transport. JSON-RPC 2.0 answers a batch with one array of the responses to
 * its requests (notifications get none; with no response at all, nothing is sent). Responses
 * to a batch's requests are held here until the last one is in; everything else on its way
 * out (notifications, requests of ours, progress for those very requests) goes as it comes,
 * so before the array. A request the host cancels gets no response (the peer suppresses it),
 * and the array then goes without it; when the session ends, whatever is open goes as it is.
 * (Streamable HTTP answers on the POST instead: see PostExchange.)
 */
export class BatchReplies {
  /** Open batches, by the id of each request still owed a response. */
  private readonly open = new Map<RequestId, OpenBatch>();

  /** `send` writes one array of responses (never empty) to the host. */
  constructor(private readonly send: (responses: JsonRpcResponse[]) => void) {}

  /**
   * Hands a batch's valid members to `target`; `errors` are the intake's answers to its
   * invalid members, and travel in the array. A request whose id is already taken (by one
   * still running, or by an earlier member of this batch) is answered there too rather than
   * run, as the peer would answer it alone: its answer would otherwise be a second response
   * with the id, outside the array.
   */
  receive(target: BatchTarget, messages: readonly JsonRpcMessage[], errors: readonly JsonRpcResponse[]): void {
    const batch: OpenBatch = { waiting: new Set(), responses: [...errors] };
    const accepted: JsonRpcMessage[] = [];
    for (const m of messages) {
      if (!isRequest(m)) {
        accepted.push(m);
      } else if (batch.waiting.has(m.id) || this.open.has(m.id) || target.peer.isHandling(m.id)) {
        batch.responses.push(errorResponse(m.id, { code: ErrorCode.InvalidRequest, message: duplicateIdMessage(m.id) }));
      } else {
        batch.waiting.add(m.id);
        accepted.push(m);
      }
    }
    // Registered before the session sees the requests: nothing it sends can come too early.
    for (const id of batch.waiting) this.open.set(id, batch);
    if (batch.waiting.size === 0) this.finish(batch);
    for (const m of accepted) target.receive(m);
  }

  /**
   * Offers an outgoing message: true when it is a response to a request of an open batch,
   * which then keeps it for its array (and sends the array if it was the last one owed).
   */
  hold(message: JsonRpcMessage, options?: SendOptions): boolean {
    const related = options?.relatedRequestId;
    if (related === undefined || !isResponse(message)) return false;
    const batch = this.open.get(related);
    if (!batch) return false;
    this.open.delete(related);
    batch.waiting.delete(related);
    batch.responses.push(message);
    if (batch.waiting.size === 0) this.finish(batch);
    return true;
  }

  /** The host cancelled request `id`: it gets no response, so its batch stops waiting for one. */
  cancelled(id: RequestId): void {
    const batch = this.open.get(id);
    if (!batch) return;
    this.open.delete(id);
    batch.waiting.delete(id);
    if (batch.waiting.size === 0) this.finish(batch);
  }

  /** The session is ending: every open batch is sent with the responses it has. */
  flush(): void {
    const batches = new Set(this.open.values());
    this.open.clear();
    for (const batch of batches) this.finish(batch);
  }

  private finish(batch: OpenBatch): void {
    batch.waiting.clear();
    const responses = batch.responses.splice(0);
    if (responses.length > 0) this.send(responses);
  }
}
