import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { JsonRpcMessage, RequestId } from '@switchboard/core';
import type { HttpEndpoint } from './http-endpoint.js';
import { HttpStatusError } from './http-status-error.js';
import { mediaType, readMessageEvents, reconnectDelay } from './stream-support.js';

/*
 * Which response a Streamable HTTP session still owes, and on which stream: the bookkeeping
 * that ties a request to the POST that carried it, resumes that POST's event stream with GET +
 * Last-Event-ID when it ends early, and answers what can no longer come with an error. Apart
 * from the transport (streamable-http-transport.ts), which sends the POSTs and reads what
 * they answer, because resumption has its own state (event ids, attempts, the server's retry
 * hint, timers) that nothing else there touches.
 */

const SSE_ACCEPT = 'text/event-stream';
/** Resumptions of one response stream that may fail in a row before its requests are failed. */
const MAX_RESUME_ATTEMPTS = 5;
const STREAM_CLOSED_EARLY = 'Upstream closed the response stream before answering';

/** The response stream of one POST that carried requests, followed across resumptions. */
export interface ResponseStream {
  /** The request the POST carried: what the server sends on this stream relates to it. */
  readonly requestId: RequestId;
  /** Requests whose responses have not arrived yet. */
  readonly owed: Set<RequestId>;
  /** Set once the server has given an event id: the stream can then be resumed. */
  lastEventId?: string;
  /** Resumptions failed in a row. */
  attempts: number;
  /** The HTTP request carrying the stream now (the POST, then any resumption GET). */
  req?: ClientRequest;
  timer?: NodeJS.Timeout;
}

/** What the response streams need from their transport. */
export interface ResponseStreamHost {
  /** The session's request headers, with this Accept. */
  headers(accept: string): OutgoingHttpHeaders;
  /** One message's JSON text from this stream, to parse and deliver. */
  receive(json: string, stream: ResponseStream): void;
  /** An event over MAX_MESSAGE_CHARS arrived; `length` characters were seen. */
  tooLong(length: number): void;
  /** The transport's own callbacks, read when called: the error answering an owed request, a broken stream. */
  onmessage?: (message: JsonRpcMessage) => void;
  onerror?: (error: Error) => void;
}

/**
 * The open response streams of one transport, and which of them owes each response. A
 * stream that ends before it delivered every response it owes is resumed when the server
 * gave event ids (backing off as the standalone stream does, at most five failures in a
 * row); otherwise, or when resuming fails, its requests are answered with a -32000 error at
 * once, so no caller waits for its timeout.
 */
export class ResponseStreams {
  private readonly streams = new Set<ResponseStream>();
  private readonly owedBy = new Map<RequestId, ResponseStream>();
  /** The server's `retry` hint: how long to wait before resuming a stream. */
  private retryMs?: number;
  private stopped = false;

  constructor(
    private readonly host: ResponseStreamHost,
    private readonly endpoint: HttpEndpoint,
  ) {}

  /** A request is about to be POSTed: the stream its response is owed on. */
  open(id: RequestId): ResponseStream {
    const stream: ResponseStream = { requestId: id, owed: new Set([id]), attempts: 0 };
    this.streams.add(stream);
    this.owedBy.set(id, stream);
    return stream;
  }

  /** A response arrived (on whichever stream): its request is no longer owed. */
  settle(id: RequestId): void {
    const stream = this.owedBy.get(id);
    if (!stream) return;
    this.owedBy.delete(id);
    stream.owed.delete(id);
  }

  /**
   * The caller gave up on a request (timeout, cancellation): it gets no answer, so its
   * stream is not worth keeping open or resuming (the server may never end it).
   */
  forget(id: unknown): void {
    const stream = this.owedBy.get(id as RequestId);
    if (!stream) return;
    this.settle(id as RequestId);
    if (stream.owed.size > 0) return;
    stream.req?.destroy();
    this.drop(stream);
  }

  /** Nothing more will come on the stream, or nothing is owed on it any more. */
  drop(stream: ResponseStream): void {
    clearTimeout(stream.timer);
    stream.req = undefined;
    for (const id of stream.owed) this.owedBy.delete(id);
    stream.owed.clear();
    this.streams.delete(stream);
  }

  /** Reads the stream's events (a POST's answer or a resumption) and follows up when it closes. */
  readEvents(res: IncomingMessage, stream: ResponseStream): void {
    const parser = readMessageEvents(
      res,
      stream.lastEventId,
      (json) => this.host.receive(json, stream),
      (ms) => (this.retryMs = ms),
      (length) => this.host.tooLong(length),
    );
    res.on('close', () => {
      stream.lastEventId = parser.lastEventId;
      this.ended(stream, res.complete, true);
    });
  }

  /** The stream's response closed: resumed, failed, or let go when it owes nothing. */
  ended(stream: ResponseStream, complete: boolean, resumable: boolean): void {
    stream.req = undefined;
    if (this.stopped || stream.owed.size === 0) return this.drop(stream);
    if (!complete) this.host.onerror?.(new Error('the upstream response stream broke off'));
    if (resumable && stream.lastEventId !== undefined) return this.scheduleResume(stream);
    this.failOwed(stream);
  }

  /** The transport closed: every stream is aborted, and none resumed. */
  stop(): void {
    this.stopped = true;
    for (const stream of this.streams) {
      clearTimeout(stream.timer);
      stream.req?.destroy();
    }
    this.streams.clear();
    this.owedBy.clear();
  }

  private scheduleResume(stream: ResponseStream): void {
    if (stream.attempts >= MAX_RESUME_ATTEMPTS) {
      this.host.onerror?.(new Error(`could not resume an upstream response stream in ${MAX_RESUME_ATTEMPTS} attempts`));
      return this.failOwed(stream);
    }
    const delay = reconnectDelay(this.retryMs, stream.attempts++);
    stream.timer = setTimeout(() => this.resume(stream), delay);
  }

  /** GET + Last-Event-ID: the server replays what the stream missed, then goes on with it. */
  private resume(stream: ResponseStream): void {
    stream.timer = undefined;
    if (this.stopped) return;
    const headers = this.host.headers(SSE_ACCEPT);
    headers['last-event-id'] = stream.lastEventId;
    const req = this.endpoint.request('GET', headers);
    stream.req = req;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300 && mediaType(res.headers['content-type']) === 'text/event-stream') {
        // Connected: a server that closes streams to make clients poll (2025-11-25) may do
        // so any number of times; only failures in a row count against the limit.
        stream.attempts = 0;
        return this.readEvents(res, stream);
      }
      res.resume();
      stream.req = undefined;
      // A 4xx will not change on a retry (404: the session is gone; 405: no GET streams).
      if (status >= 400 && status < 500) {
        this.host.onerror?.(new HttpStatusError(status, res.statusMessage, ''));
        return this.failOwed(stream);
      }
      this.scheduleResume(stream);
    });
    req.on('error', (err) => {
      // After close() or forget() (which let go of the request) there is nothing to resume.
      if (answered || this.stopped || stream.req !== req) return;
      stream.req = undefined;
      this.host.onerror?.(err);
      this.scheduleResume(stream);
    });
    req.end();
  }

  /** Answers every request the stream still owes with an error, so callers do not wait. */
  private failOwed(stream: ResponseStream): void {
    const ids = [...stream.owed];
    this.drop(stream);
    for (const id of ids) {
      this.host.onmessage?.({ jsonrpc: '2.0', id, error: { code: -32000, message: STREAM_CLOSED_EARLY } });
    }
  }
}
