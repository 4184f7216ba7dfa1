import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { encodeMessage, type JsonRpcMessage, type MessageExtra } from '@switchboard/core';
import type { RemoteServerConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import { HttpEndpoint } from './http-endpoint.js';
import { ContentTypeError, statusError } from './http-status-error.js';
import { keepResultText } from './keep-result-text.js';
import { MAX_MESSAGE_CHARS } from './message-limit.js';
import { UpstreamMessageReader } from './message-reader.js';
import { ListenStream, type ListenHost } from './listen-stream.js';
import { ResponseStreams, type ResponseStream, type ResponseStreamHost } from './response-streams.js';
import { mediaType } from './stream-support.js';
import type { UpstreamTransport } from './upstream-transport.js';

const POST_ACCEPT = 'application/json, text/event-stream';
const DELETE_TIMEOUT_MS = 1000;
const MAX_REDIRECTS = 5;

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
 *   with a -32000 error at once, so no caller waits for its timeout (response-streams.ts);
 * - after `notifications/initialized` a standalone GET stream carries server-initiated
 *   messages (listen-stream.ts);
 * - a non-2xx answer rejects send() with an HttpStatusError: the connection reads its status
 *   (the legacy SSE fallback, an expired session);
 * - a message (a JSON body, an event) over MAX_MESSAGE_CHARS means a broken server: the
 *   session is closed rather than the message held in memory;
 * - close() aborts everything, ends the session with DELETE and drops the pool.
 */
export class StreamableHttpUpstreamTransport implements UpstreamTransport, ListenHost, ResponseStreamHost {
  onmessage?: (message: JsonRpcMessage, extra?: MessageExtra) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private readonly endpoint: HttpEndpoint;
  private session?: string;
  private protocolVersion?: string;
  private closed = false;
  private listener?: ListenStream;
  /** The open response streams, and which of them owes each response. */
  private readonly responses: ResponseStreams;
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
    this.responses = new ResponseStreams(this, this.endpoint);
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
    if ('method' in message && message.method === 'notifications/cancelled') this.responses.forget(message.params?.requestId);
    const isRequest = 'method' in message && 'id' in message;
    const stream = isRequest ? this.responses.open(message.id) : undefined;
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
    this.responses.stop();
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
      if (stream) this.responses.drop(stream);
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
      if (stream) this.responses.drop(stream);
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
      if (stream) this.responses.drop(stream);
      res.resume();
      return resolve();
    }
    const type = mediaType(res.headers['content-type']);
    if (type === 'text/event-stream') {
      resolve();
      return this.responses.readEvents(res, stream);
    }
    if (type === 'application/json') {
      resolve();
      return this.readJson(res, stream);
    }
    this.responses.drop(stream);
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
    res.on('close', () => this.responses.ended(stream, res.complete, false));
  }

  private deliver(message: JsonRpcMessage, json: string | undefined, extra: MessageExtra | undefined): void {
    if (!('method' in message) && message.id !== null) this.responses.settle(message.id);
    if (json !== undefined) keepResultText(message, json);
    this.onmessage?.(message, extra);
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
