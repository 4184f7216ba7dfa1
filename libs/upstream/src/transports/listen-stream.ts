import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { HttpEndpoint } from './http-endpoint.js';
import { HttpStatusError } from './http-status-error.js';
import { mediaType, readMessageEvents, reconnectDelay } from './stream-support.js';

/** What the standalone stream needs from its transport. */
export interface ListenHost {
  /** The session's request headers, with this Accept. */
  headers(accept: string): OutgoingHttpHeaders;
  /** One message's JSON text, to parse and deliver. */
  receive(json: string): void;
  /** An event over MAX_MESSAGE_CHARS arrived (the stream is dropped); `length` characters were seen. */
  tooLong(length: number): void;
}

/** Reconnections failed in a row before the stream is given up (and reported). */
const MAX_FAILURES = 5;

/**
 * The standalone GET stream of a Streamable HTTP session: the server's own requests and
 * notifications (list_changed, resource updates, log messages) that belong to no POST. It
 * reconnects with Last-Event-ID when it ends (the server may close it to make clients poll,
 * or it broke), backing off from 0.5 s to 10 s; after five failures in a row it reports an
 * error and stops, and the connection's health check decides whether the server is gone.
 */
export class ListenStream {
  private req?: ClientRequest;
  private timer?: NodeJS.Timeout;
  private lastEventId?: string;
  private retryMs?: number;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly host: ListenHost,
    private readonly endpoint: HttpEndpoint,
    private readonly report: (error: Error) => void,
  ) {}

  open(): void {
    this.timer = undefined;
    if (this.stopped) return;
    const headers = this.host.headers('text/event-stream');
    if (this.lastEventId !== undefined) headers['last-event-id'] = this.lastEventId;
    const req = this.endpoint.request('GET', headers);
    this.req = req;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      this.onResponse(res);
    });
    req.on('error', (err) => {
      if (answered || this.stopped) return;
      this.req = undefined;
      // Refused or reset: perhaps the server is gone, which the connection's health check
      // finds out at once when told, instead of after every retry.
      this.report(err);
      this.retry(err);
    });
    req.end();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.req?.destroy();
    this.req = undefined;
  }

  private onResponse(res: IncomingMessage): void {
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300 && mediaType(res.headers['content-type']) === 'text/event-stream') {
      this.failures = 0;
      return this.read(res);
    }
    res.resume();
    this.req = undefined;
    // 405: the server offers no standalone stream, which the spec allows.
    if (status === 405) return;
    const err = new HttpStatusError(status, res.statusMessage, '');
    // Other 4xx answers will not change by asking again (404: the session is gone, which
    // the next request will find out too); 409 (a previous stream not yet noticed as
    // closed) and 429 may.
    if (status >= 400 && status < 500 && status !== 409 && status !== 429) return this.report(err);
    this.retry(err);
  }

  private read(res: IncomingMessage): void {
    const parser = readMessageEvents(
      res,
      this.lastEventId,
      (json) => this.host.receive(json),
      (ms) => (this.retryMs = ms),
      (length) => this.host.tooLong(length),
    );
    res.on('close', () => {
      this.req = undefined;
      if (this.stopped) return;
      this.lastEventId = parser.lastEventId;
      const broke = !res.complete;
      if (broke) this.report(new Error('the upstream event stream broke off'));
      this.retry();
    });
  }

  private retry(cause?: Error): void {
    if (this.stopped) return;
    if (this.failures >= MAX_FAILURES) {
      const why = cause ? `: ${cause.message}` : '';
      return this.report(new Error(`the upstream event stream could not be reopened in ${MAX_FAILURES} attempts${why}`));
    }
    const delay = reconnectDelay(this.retryMs, this.failures++);
    this.timer = setTimeout(() => this.open(), delay);
  }
}
