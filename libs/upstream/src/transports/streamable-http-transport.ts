import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { encodeMessage, type JsonRpcMessage, type MessageExtra, type RequestId } from '@switchboard/core';
import type { RemoteServerConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import { HttpEndpoint } from './http-endpoint.js';
import { ContentTypeError, HttpStatusError, statusError } from './http-status-error.js';
import { keepResultText } from './keep-result-text.js';
import { MAX_MESSAGE_CHARS } from './message-limit.js';
import { UpstreamMessageReader } from './message-reader.js';
import { ListenStream, type ListenHost } from './listen-stream.js';
import { mediaType, readMessageEvents, reconnectDelay } from './stream-support.js';
import type { UpstreamTransport } from './upstream-transport.js';

const POST_ACCEPT = 'application/json, text/event-stream';
const SSE_ACCEPT = 'text/event-stream';
/** Resumptions of one response stream that may fail in a row before its requests are failed. */
const MAX_RESUME_ATTEMPTS = 5;
const DELETE_TIMEOUT_MS = 1000;
const MAX_REDIRECTS = 5;
const STREAM_CLOSED_EARLY = 'Upstream closed the response stream before answering';

/** One message on its way: what post() needs again to retry it or follow a redirect. */
interface Outgoing {
  readonly message: JsonRpcMessage;
  readonly body: string;
  readonly stream: ResponseStream | undefined;
  readonly isInitialize: boolean;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
  retried: boolean;
  redirects: number;
}

/** The response stream of one POST that carried requests, followed across resumptions. */
interface ResponseStream {
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

/**
 * The Streamable HTTP client transport, on node:http with a keep-alive pool. Our own rather
 * than the SDK's because the SDK's (fetch, web streams, a zod parse of every message) was
 * most of the gateway's CPU per relayed call. What it does, per the spec (2025-03-26, with
 * 2025-06-18's protocol version header and 2025-11-25's resumable request streams):
 * - every message is a POST; send() settles once the status is known, and what the answer
 *   carries (one JSON message, a batch, or an event stream) arrives through onmessage;
 * - the session id from the initialize answer, and the protocol version once negotiated, go
 *   on every later request;
 * - a response stream that ends before it delivered every response it owes is resumed with
 *   GET + Last-Event-ID when the server gave event ids; otherwise those requests are answered
 *   with a -32000 error at once, so no caller waits for its timeout;
 * - after `notifications/initialized` a standalone GET stream carries server-initiated
 *   messages (listen-stream.ts);
 * - a non-2xx answer rejects send() with an HttpStatusError: the connection reads its status
 *   (the legacy SSE fallback, an expired session);
 * - a message (a JSON body, an event) over MAX_MESSAGE_CHARS means a broken server: the
 *   session is closed rather than the message held in memory;
 * - close() aborts everything, ends the session with DELETE and drops the pool.
 */
export class StreamableHttpUpstreamTransport implements UpstreamTransport, ListenHost {
  onmessage?: (message: JsonRpcMessage, extra?: MessageExtra) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private readonly endpoint: HttpEndpoint;
  private session?: string;
  private protocolVersion?: string;
  private closed = false;
  private listener?: ListenStream;
  /** The open response streams, and which of them owes each response. */
  private readonly streams = new Set<ResponseStream>();
  private readonly owedBy = new Map<RequestId, ResponseStream>();
  /** The server's `retry` hint: how long to wait before resuming a stream. */
  private retryMs?: number;
  /** Why the transport closed itself, when it did. */
  private failure?: string;
  /** What the server sends, checked as JSON-RPC (message-reader.ts). */
  private readonly reader: UpstreamMessageReader;

  /**
   * @param redactText hides secrets in what the server sends before any of it is logged (the
   *   app passes the audit log's redactor, as for stdio upstreams).
   */
  constructor(
    private readonly config: RemoteServerConfig,
    private readonly logger: Logger,
    private readonly redactText: (text: string) => string = (text) => text,
  ) {
    this.endpoint = new HttpEndpoint(new URL(config.url));
    this.reader = new UpstreamMessageReader({
      logger,
      redactText,
      send: (refusal) => this.send(refusal),
      deliver: (message, json, extra) => this.deliver(message, json, extra),
    });
  }

  get sessionId(): string | undefined {
    return this.session;
  }

  async start(): Promise<void> {
    if (this.closed) throw new Error('the transport is closed');
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  closeReason(): string | undefined {
    return this.failure;
  }

  send(message: JsonRpcMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the transport is closed'));
    if ('method' in message && message.method === 'notifications/cancelled') this.forget(message.params?.requestId);
    const isRequest = 'method' in message && 'id' in message;
    const stream = isRequest ? this.openStream(message.id) : undefined;
    const body = encodeMessage(message);
    const isInitialize = isRequest && message.method === 'initialize';
    return new Promise((resolve, reject) =>
      this.post({ message, body, stream, isInitialize, resolve, reject, retried: false, redirects: 0 }),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.reader.stop();
    this.listener?.stop();
    for (const stream of this.streams) {
      clearTimeout(stream.timer);
      stream.req?.destroy();
    }
    this.streams.clear();
    this.owedBy.clear();
    await this.endSession();
    this.endpoint.destroy();
    const onclose = this.onclose;
    this.onclose = undefined;
    onclose?.();
  }

  /** The headers of every request: the configured ones, then ours. */
  headers(accept: string, withSession = true): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = { ...this.config.headers, accept };
    if (withSession && this.session !== undefined) headers['mcp-session-id'] = this.session;
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion;
    return headers;
  }

  /**
   * Parses the JSON text of an SSE event or a POST answer (a message or a batch) and delivers
   * it. A server request on a POST's stream is related to the request that POST carried: the
   * gateway routes it to the host that caused that request. It runs inside a response's
   * 'data' or 'end' handler, where an exception would be uncaught and end the daemon: what
   * handling a message throws is logged instead.
   */
  receive(json: string, stream?: ResponseStream): void {
    this.reader.read(json, stream ? { relatedRequestId: stream.requestId } : undefined);
  }

  /**
   * A message over MAX_MESSAGE_CHARS: the server is broken. Its size is logged (never its
   * content) and the session closed, which fails the calls in flight (onclose); the
   * connection's backoff decides when to try again.
   */
  tooLong(length: number): void {
    if (this.closed) return;
    this.failure = `it sent a message over the limit of ${MAX_MESSAGE_CHARS} characters`;
    this.logger.error({ chars: length, limit: MAX_MESSAGE_CHARS }, 'upstream sent a message over the size limit; closing the connection');
    void this.close();
  }

  private post(out: Outgoing): void {
    // A new session starts without the id of an old one.
    const headers = this.headers(POST_ACCEPT, !out.isInitialize);
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(out.body);
    const req = this.endpoint.request('POST', headers);
    const { stream } = out;
    if (stream) stream.req = req;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      this.onPostResponse(out, res);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (answered) return; // the response's own close handles a break after this point
      if (this.closed) return out.reject(new Error('the transport is closed'));
      // forget() aborted it: the caller has already given up.
      if (stream && stream.req !== req) return out.reject(new Error('the request was abandoned'));
      // An idle keep-alive connection the server closed just as we reused it: the server
      // never read this request, so sending it again is safe.
      if (!out.retried && req.reusedSocket && err.code === 'ECONNRESET') {
        out.retried = true;
        return this.post(out);
      }
      if (stream) this.dropStream(stream);
      out.reject(err);
      this.onerror?.(err);
    });
    req.end(out.body);
  }

  private onPostResponse(out: Outgoing, res: IncomingMessage): void {
    const { stream, resolve, reject } = out;
    const status = res.statusCode ?? 0;
    // 307 and 308 keep the method and the body (the others would turn the POST into a GET).
    if ((status === 307 || status === 308) && out.redirects < MAX_REDIRECTS && this.endpoint.follow(res.headers.location)) {
      res.resume();
      out.redirects++;
      return this.post(out);
    }
    if (status < 200 || status >= 300) {
      if (stream) this.dropStream(stream);
      void statusError(res).then(reject);
      return;
    }
    if (out.isInitialize) {
      const id = res.headers['mcp-session-id'];
      if (typeof id === 'string' && id !== '') this.session = id;
    }
    if ((out.message as { method?: string }).method === 'notifications/initialized') this.listen();
    if (!stream || status === 202 || status === 204) {
      // Nothing owed (a notification or a response was accepted); if a request got a 202
      // after all, its answer can only come on the standalone stream.
      if (stream) this.dropStream(stream);
      res.resume();
      return resolve();
    }
    const type = mediaType(res.headers['content-type']);
    if (type === 'text/event-stream') {
      resolve();
      return this.readEvents(res, stream);
    }
    if (type === 'application/json') {
      resolve();
      return this.readJson(res, stream);
    }
    this.dropStream(stream);
    res.resume();
    reject(new ContentTypeError(type));
  }

  private readJson(res: IncomingMessage, stream: ResponseStream): void {
    const pieces: string[] = [];
    let length = 0;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      length += chunk.length;
      if (length <= MAX_MESSAGE_CHARS) return void pieces.push(chunk);
      pieces.length = 0;
      res.destroy(); // no 'end': nothing is parsed
      this.tooLong(length);
    });
    res.on('error', () => undefined); // close reports it
    res.on('end', () => this.receive(pieces.length === 1 ? pieces[0]! : pieces.join('')));
    res.on('close', () => this.streamEnded(stream, res.complete, false));
  }

  private readEvents(res: IncomingMessage, stream: ResponseStream): void {
    const parser = readMessageEvents(
      res,
      stream.lastEventId,
      (json) => this.receive(json, stream),
      (ms) => (this.retryMs = ms),
      (length) => this.tooLong(length),
    );
    res.on('close', () => {
      stream.lastEventId = parser.lastEventId;
      this.streamEnded(stream, res.complete, true);
    });
  }

  private deliver(message: JsonRpcMessage, json: string | undefined, extra: MessageExtra | undefined): void {
    if (!('method' in message) && message.id !== null) this.settle(message.id);
    if (json !== undefined) keepResultText(message, json);
    this.onmessage?.(message, extra);
  }

  private openStream(id: RequestId): ResponseStream {
    const stream: ResponseStream = { requestId: id, owed: new Set([id]), attempts: 0 };
    this.streams.add(stream);
    this.owedBy.set(id, stream);
    return stream;
  }

  /** A response arrived (on whichever stream): its request is no longer owed. */
  private settle(id: RequestId): void {
    const stream = this.owedBy.get(id);
    if (!stream) return;
    this.owedBy.delete(id);
    stream.owed.delete(id);
  }

  /**
   * The caller gave up on a request (timeout, cancellation): it gets no answer, so its
   * stream is not worth keeping open or resuming (the server may never end it).
   */
  private forget(id: unknown): void {
    const stream = this.owedBy.get(id as RequestId);
    if (!stream) return;
    this.settle(id as RequestId);
    if (stream.owed.size > 0) return;
    stream.req?.destroy();
    this.dropStream(stream);
  }

  private dropStream(stream: ResponseStream): void {
    clearTimeout(stream.timer);
    stream.req = undefined;
    for (const id of stream.owed) this.owedBy.delete(id);
    stream.owed.clear();
    this.streams.delete(stream);
  }

  private streamEnded(stream: ResponseStream, complete: boolean, resumable: boolean): void {
    stream.req = undefined;
    if (this.closed || stream.owed.size === 0) return this.dropStream(stream);
    if (!complete) this.onerror?.(new Error('the upstream response stream broke off'));
    if (resumable && stream.lastEventId !== undefined) return this.scheduleResume(stream);
    this.failOwed(stream);
  }

  private scheduleResume(stream: ResponseStream): void {
    if (stream.attempts >= MAX_RESUME_ATTEMPTS) {
      this.onerror?.(new Error(`could not resume an upstream response stream in ${MAX_RESUME_ATTEMPTS} attempts`));
      return this.failOwed(stream);
    }
    const delay = reconnectDelay(this.retryMs, stream.attempts++);
    stream.timer = setTimeout(() => this.resume(stream), delay);
  }

  /** GET + Last-Event-ID: the server replays what the stream missed, then goes on with it. */
  private resume(stream: ResponseStream): void {
    stream.timer = undefined;
    if (this.closed) return;
    const headers = this.headers(SSE_ACCEPT);
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
        this.onerror?.(new HttpStatusError(status, res.statusMessage, ''));
        return this.failOwed(stream);
      }
      this.scheduleResume(stream);
    });
    req.on('error', (err) => {
      // After close() or forget() (which let go of the request) there is nothing to resume.
      if (answered || this.closed || stream.req !== req) return;
      stream.req = undefined;
      this.onerror?.(err);
      this.scheduleResume(stream);
    });
    req.end();
  }

  /** Answers every request the stream still owes with an error, so callers do not wait. */
  private failOwed(stream: ResponseStream): void {
    const ids = [...stream.owed];
    this.dropStream(stream);
    for (const id of ids) {
      this.onmessage?.({ jsonrpc: '2.0', id, error: { code: -32000, message: STREAM_CLOSED_EARLY } });
    }
  }

  private listen(): void {
    if (this.listener || this.closed) return;
    this.listener = new ListenStream(this, this.endpoint, (err) => this.onerror?.(err));
    this.listener.open();
  }

  /** DELETE ends the session on the server (best effort: 405 means it keeps sessions itself). */
  private endSession(): Promise<void> {
    if (this.session === undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const req = this.endpoint.request('DELETE', this.headers(POST_ACCEPT));
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        req.destroy();
        done();
      }, DELETE_TIMEOUT_MS);
      req.on('response', (res) => {
        res.resume();
        done();
      });
      req.on('error', done);
      req.end();
    });
  }
}
