import { Cancellation, type Abandonment } from './cancellation.js';
import { ErrorCode, McpError, duplicateIdMessage, toWireError } from './core.errors.js';
import type {
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  RequestId,
} from './jsonrpc.js';
import type { InboundContext, MessageExtra, PeerHandlers, PeerRequestOptions, SendFn, SendOptions } from './jsonrpc-peer.contract.js';

export type * from './jsonrpc-peer.contract.js';

/** What a question is about when nobody said: shared, never changed (about() replaces it). */
const ABOUT_NONE: readonly RequestId[] = Object.freeze([]);

/** A request of the other side's being handled. */
interface Inbound {
  cancellation: Cancellation;
  /** False for `initialize`: no client may cancel it (spec), and its answer names the revision. */
  cancellable: boolean;
  /** The requests of ours it is about (InboundContext.about). */
  about: readonly RequestId[];
}

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
  progressToken?: string | number;
  onProgress?: (params: Record<string, unknown>) => void;
  onAnswer?: (result: Record<string, unknown>) => void;
  idleMs?: number;
  deadline?: number;
  waitWhileAsked?: boolean;
  origin?: unknown;
  timer?: NodeJS.Timeout;
  cleanup(): void;
}

/**
 * A JSON-RPC endpoint over any message channel: correlates responses, owns request ids,
 * progress tokens and timeouts, and turns cancellation into `notifications/cancelled` on the
 * wire. Both sides of the gateway use it, so these rules live in one place.
 */
export class JsonRpcPeer {
  private nextId = 1;
  private readonly pending = new Map<RequestId, Pending>();
  private readonly byProgressToken = new Map<string | number, RequestId>();
  /** Progress handlers of answered requests whose progress goes on (progressUntil). */
  private readonly lingeringProgress = new Map<string | number, (params: Record<string, unknown>) => void>();
  private readonly inbound = new Map<RequestId, Inbound>();
  private closedWith: McpError | undefined;

  private readonly send: SendFn;

  constructor(
    private readonly channel: SendFn,
    private readonly handlers: PeerHandlers,
  ) {
    // Every caller handles a rejected send, but a throw escaped them: a channel throws when it
    // cannot encode (JSON nested thousands deep), and one host's progress ended the process.
    this.send = (message, options) => {
      try {
        return channel(message, options);
      } catch (err) {
        return Promise.reject(err);
      }
    };
  }

  get isClosed(): boolean {
    return this.closedWith !== undefined;
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  request(
    method: string,
    params: Record<string, unknown> | undefined,
    options: PeerRequestOptions = {},
  ): Promise<Record<string, unknown>> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (options.signal?.aborted) return Promise.reject(cancelledError());
    const id = this.nextId++;
    let outParams = params;
    let progressToken: number | undefined;
    if (options.onProgress) {
      progressToken = id;
      const meta = (params?._meta as Record<string, unknown> | undefined) ?? {};
      outParams = { ...params, _meta: { ...meta, progressToken } };
    }

    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.settle(id);
        void this.send({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: id, reason: 'Cancelled by the client' },
        }).catch(() => undefined);
        reject(cancelledError());
      };
      const entry: Pending = {
        resolve,
        reject,
        progressToken,
        onProgress: options.onProgress,
        onAnswer: options.onAnswer,
        idleMs: options.timeoutMs,
        deadline: options.maxTotalMs ? Date.now() + options.maxTotalMs : undefined,
        waitWhileAsked: options.waitWhileAsked,
        origin: options.origin,
        cleanup: () => {
          if (entry.timer) clearTimeout(entry.timer);
          options.signal?.removeEventListener('abort', onAbort);
          if (progressToken !== undefined) {
            this.byProgressToken.delete(progressToken);
            this.keepProgress(progressToken, options);
          }
        },
      };
      this.pending.set(id, entry);
      if (progressToken !== undefined) this.byProgressToken.set(progressToken, id);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.armTimer(id, entry);

      const message: JsonRpcRequest = { jsonrpc: '2.0', id, method, ...(outParams ? { params: outParams } : {}) };
      this.send(message, { relatedRequestId: options.relatedRequestId }).catch((err) => {
        if (this.settle(id)) reject(err);
      });
    });
  }

  /** Lets progress under an answered request's token go on to its handler until `progressUntil` aborts. */
  private keepProgress(token: number, options: PeerRequestOptions): void {
    const { progressUntil, onProgress } = options;
    if (!progressUntil || !onProgress || progressUntil.aborted || this.closedWith) return;
    this.lingeringProgress.set(token, onProgress);
    progressUntil.addEventListener('abort', () => this.lingeringProgress.delete(token), { once: true });
  }

  notify(method: string, params?: Record<string, unknown>, options?: SendOptions): Promise<void> {
    if (this.closedWith) return Promise.resolve();
    return this.send({ jsonrpc: '2.0', method, ...(params ? { params } : {}) }, options);
  }

  /** The origin given to a request of ours still pending; undefined once it settled. */
  originOf(id: RequestId): unknown {
    return this.pending.get(id)?.origin;
  }

  /** The origins of every request of ours still pending (those given one). */
  pendingOrigins(): unknown[] {
    const origins: unknown[] = [];
    for (const entry of this.pending.values()) if (entry.origin !== undefined) origins.push(entry.origin);
    return origins;
  }

  /** The ids of the requests of ours still pending that were given one of `origins`. */
  idsOf(origins: unknown[]): RequestId[] {
    const wanted = new Set(origins);
    const ids: RequestId[] = [];
    for (const [id, entry] of this.pending) if (entry.origin !== undefined && wanted.has(entry.origin)) ids.push(id);
    return ids;
  }

  /** Whether a request of the other side's with this id is still being handled (not answered, not cancelled). */
  isHandling(id: RequestId): boolean {
    return this.inbound.has(id);
  }

  /** Feeds one message that arrived from the other side. */
  handle(message: JsonRpcMessage, extra?: MessageExtra): void {
    if (!('method' in message)) return this.handleResponse(message);
    if ('id' in message) return void this.handleRequest(message as JsonRpcRequest, extra?.relatedRequestId);
    const n = message as JsonRpcNotification;
    if (n.method === 'notifications/progress' && this.routeProgress(n)) return;
    if (n.method === 'notifications/cancelled') {
      const id = n.params?.requestId as RequestId | undefined;
      const inbound = id === undefined ? undefined : this.inbound.get(id);
      // Too late for that request: its answer is decided and recorded (answerDecided); or it is initialize.
      if (inbound && (inbound.cancellation.decided || !inbound.cancellable)) return;
      if (inbound) {
        this.inbound.delete(id!);
        const reason = n.params?.reason;
        const abandonment: Abandonment = typeof reason === 'string' ? { kind: 'cancelled', reason } : { kind: 'cancelled' };
        inbound.cancellation.abort(abandonment);
        this.handlers.onRequestCancelled?.(id!);
        return;
      }
    }
    this.handlers.onNotification(n);
  }

  /**
   * Rejects everything in flight with `error` and refuses new requests. With `cancelReason`
   * (the channel still works: we are the ones leaving), the other side is told of each
   * request of ours it may still be running, with notifications/cancelled: a server that
   * does not stop work when its connection closes would otherwise run it to the end.
   * `told`: what the transport answered the other side's requests still running with as it
   * closed, if it could answer them (the audit log records it for them).
   */
  close(error: McpError, how: { cancelReason?: string; told?: { code: number; message: string } } = {}): void {
    const { cancelReason, told } = how;
    if (this.closedWith) return;
    this.closedWith = error;
    for (const [id, entry] of this.pending) {
      this.settle(id);
      if (cancelReason !== undefined) {
        void this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: cancelReason } }).catch(
          () => undefined,
        );
      }
      entry.reject(error);
    }
    this.lingeringProgress.clear();
    const abandonment: Abandonment = told ? { kind: 'closed', told } : { kind: 'closed' };
    for (const inbound of this.inbound.values()) inbound.cancellation.abort(abandonment);
    this.inbound.clear();
  }

  private handleResponse(message: JsonRpcResponse): void {
    if (message.id === null) return;
    const entry = this.pending.get(message.id);
    if (!entry || !this.settle(message.id)) return;
    if ('error' in message) return entry.reject(new McpError(message.error.code, message.error.message, message.error.data));
    try {
      entry.onAnswer?.(message.result);
    } catch (err) {
      // Settled already: a throwing callback must fail the request, not leave it hanging.
      return entry.reject(err);
    }
    entry.resolve(message.result);
  }

  private async handleRequest(request: JsonRpcRequest, relatedRequestId?: RequestId): Promise<void> {
    if (this.inbound.has(request.id)) {
      // The id is taken by a request still running: its cancellation and its answer are
      // keyed by that id. Not sent as related to it, so the first request's route (an HTTP
      // POST) does not receive this answer instead of its own.
      const error = { code: ErrorCode.InvalidRequest, message: duplicateIdMessage(request.id) };
      await this.send({ jsonrpc: '2.0', id: request.id, error }).catch(() => undefined);
      return;
    }
    const cancellation = new Cancellation();
    // About no request of ours unless the transport or the handler says which: a question
    // asked over a channel that cannot say (stdio, an HTTP GET stream) is not about every
    // request in flight there, or one host's questions would hold another's timeouts open.
    const about = relatedRequestId === undefined ? ABOUT_NONE : [relatedRequestId];
    const inbound: Inbound = { cancellation, cancellable: request.method !== 'initialize', about };
    this.inbound.set(request.id, inbound);
    let response: JsonRpcResponse;
    try {
      const ctx: InboundContext = { signal: cancellation, about: (ids) => void (inbound.about = [...ids]) };
      if (relatedRequestId !== undefined) ctx.relatedRequestId = relatedRequestId;
      const result = await this.handlers.onRequest(request, ctx);
      response = { jsonrpc: '2.0', id: request.id, result };
    } catch (err) {
      if (!(err instanceof McpError)) this.handlers.onInternalError?.(err, request);
      response = { jsonrpc: '2.0', id: request.id, error: toWireError(err) };
    }
    // A cancelled request gets no response (the spec says the receiver should not send one).
    const cancelled = cancellation.aborted;
    if (!cancelled) this.inbound.delete(request.id);
    this.questionSettled(inbound.about);
    if (cancelled) return;
    await this.answer(request, response);
  }

  /**
   * Sends the answer to a request of the other side's. A channel throws (rather than reject)
   * when it cannot encode a message: a result nested thousands deep, say. Such an answer is
   * replaced, once, by -32603 under the same id, so the requester is not left to wait for its
   * timeout; the hook (onInternalError) logs why.
   */
  private async answer(request: JsonRpcRequest, response: JsonRpcResponse): Promise<void> {
    const options = { relatedRequestId: request.id };
    let sent: Promise<void>;
    try {
      sent = this.channel(response, options);
    } catch (err) {
      const failure = new Error(`the answer to ${request.method} could not be encoded: sent -32603 instead`, { cause: err });
      this.handlers.onInternalError?.(failure, request);
      sent = this.send({ jsonrpc: '2.0', id: request.id, error: toWireError(failure) }, options);
    }
    await sent.catch(() => undefined);
  }

  private routeProgress(n: JsonRpcNotification): boolean {
    const token = n.params?.progressToken as string | number | undefined;
    const id = token === undefined ? undefined : this.byProgressToken.get(token);
    const entry = id === undefined ? undefined : this.pending.get(id);
    if (!entry) {
      const lingering = token === undefined ? undefined : this.lingeringProgress.get(token);
      lingering?.(n.params!);
      return lingering !== undefined;
    }
    this.armTimer(id!, entry);
    entry.onProgress?.(n.params!);
    return true;
  }

  private armTimer(id: RequestId, entry: Pending): void {
    if (entry.timer) clearTimeout(entry.timer);
    const now = Date.now();
    const idle = entry.idleMs ?? Infinity;
    const hard = entry.deadline === undefined ? Infinity : entry.deadline - now;
    const wait = Math.min(idle, hard);
    if (wait === Infinity) return;
    const idleEnds = idle <= hard;
    entry.timer = setTimeout(() => {
      if (idleEnds && entry.waitWhileAsked && this.isAskedAbout(id)) this.armTimer(id, entry);
      else this.expire(id, idleEnds ? idle : undefined);
    }, Math.max(0, wait));
    entry.timer.unref?.();
  }

  /** Whether a question of the other side's about this request of ours is unanswered. */
  private isAskedAbout(id: RequestId): boolean {
    for (const inbound of this.inbound.values()) if (inbound.about.includes(id)) return true;
    return false;
  }

  /** The requests of ours a settled question was about get their full idle time again. */
  private questionSettled(about: readonly RequestId[]): void {
    for (const id of about) {
      const entry = this.pending.get(id);
      if (entry?.waitWhileAsked) this.armTimer(id, entry);
    }
  }

  private expire(id: RequestId, idleMs: number | undefined): void {
    const entry = this.pending.get(id);
    if (!entry || !this.settle(id)) return;
    const reason = idleMs !== undefined ? `no response within ${idleMs} ms` : 'the maximum request time was reached';
    void this.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: `Request timed out: ${reason}` },
    }).catch(() => undefined);
    entry.reject(new McpError(ErrorCode.RequestTimeout, `Request timed out: ${reason}`));
  }

  /** Removes a pending entry; false when it was already settled. */
  private settle(id: RequestId): boolean {
    const entry = this.pending.get(id);
    if (!entry) return false;
    this.pending.delete(id);
    entry.cleanup();
    return true;
  }
}

export function cancelledError(): McpError {
  return new McpError(ErrorCode.RequestTimeout, 'Request cancelled');
}
