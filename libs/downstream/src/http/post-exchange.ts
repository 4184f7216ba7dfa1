import type { ServerResponse } from 'node:http';
import { encodeBatch, encodeMessage, isResponse, type JsonRpcMessage, type JsonRpcResponse, type RequestId } from '@switchboard/core';
import { SseStream } from './sse-stream.js';

/**
 * The answer to one POST that carried requests. It starts undecided: if every response is
 * ready before anything else must be sent, the answer is plain JSON (cheapest for both
 * sides); the first notification or request for one of these requests (progress, a log line,
 * later a relayed elicitation) switches it to an SSE stream, which ends after the last
 * response.
 */
export class PostExchange {
  private readonly waiting: Set<RequestId>;
  private readonly buffered: JsonRpcResponse[] = [];
  private sse?: SseStream;
  private finished = false;

  constructor(
    private readonly res: ServerResponse,
    requestIds: RequestId[],
    private readonly batch: boolean,
    private readonly headers: Record<string, string>,
    initialErrors: JsonRpcResponse[],
  ) {
    this.waiting = new Set(requestIds);
    this.buffered.push(...initialErrors);
  }

  get ids(): Iterable<RequestId> {
    return this.waiting;
  }

  get done(): boolean {
    return this.finished;
  }

  /** Leaves `name` out of the answer's headers, if they are not sent yet. */
  withoutHeader(name: string): void {
    delete this.headers[name];
  }

  deliver(message: JsonRpcMessage): void {
    if (this.finished) return;
    if (isResponse(message)) {
      if (message.id !== null) this.waiting.delete(message.id);
      if (this.sse) this.sse.write('message', encodeMessage(message));
      else this.buffered.push(message);
    } else {
      this.switchToSse().write('message', encodeMessage(message));
    }
    if (this.waiting.size === 0) this.finish();
  }

  /**
   * The host cancelled one of these requests: it gets no response, and this answer stops
   * waiting for it; with nothing else to wait for, the answer ends with what it has.
   */
  cancelled(id: RequestId): void {
    if (this.finished || !this.waiting.delete(id)) return;
    if (this.waiting.size === 0) this.finish();
  }

  /** Answers every request still waiting with `error` (the session ended under it). */
  failRemaining(error: { code: number; message: string }): void {
    for (const id of [...this.waiting]) this.deliver({ jsonrpc: '2.0', id, error });
  }

  private switchToSse(): SseStream {
    if (!this.sse) {
      this.sse = new SseStream(this.res, this.headers);
      for (const r of this.buffered.splice(0)) this.sse.write('message', encodeMessage(r));
    }
    return this.sse;
  }

  private finish(): void {
    this.finished = true;
    if (this.sse) {
      this.sse.end();
      return;
    }
    if (this.res.destroyed) return;
    if (this.buffered.length === 0) {
      // Every request was cancelled: no response to send. A POST that carried requests is
      // answered JSON or SSE (spec), so it is an event stream that ends at once.
      this.switchToSse().end();
      return;
    }
    const body = this.batch ? encodeBatch(this.buffered) : encodeMessage(this.buffered[0]);
    this.res.writeHead(200, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      ...this.headers,
    });
    this.res.end(body);
  }
}
