import type { ServerResponse } from 'node:http';
import { Injectable, Logger } from '@nestjs/common';
import { maySee, viewOf, type Inbox, type InboxViewer } from '@switchboard/inbox';

export const HEARTBEAT_MS = 15_000;

/**
 * What a reader may leave unread on one event stream. Past it the stream is closed rather
 * than fed: a page that stops reading (a frozen tab, a script that opened the stream and
 * paused its socket) would otherwise have every question for it, arguments and all, held in
 * the daemon's memory for as long as the connection lives. The check comes before a write,
 * so one large event still goes out whole; a page that was merely slow reconnects and gets a
 * fresh snapshot. Pages read a few KiB; the bound leaves room for a big snapshot.
 */
export const MAX_UNREAD_BYTES = 4 * 1024 * 1024;

/**
 * Open event streams one principal may hold (tabs, windows, scripts). Opening one more ends
 * that principal's oldest, with a `closed` event telling its page not to reconnect: the
 * newest is the one in front of the person, and a stream whose reader vanished without
 * hanging up (a laptop put to sleep) must not lock its owner out, as refusing the new one
 * would.
 */
export const MAX_STREAMS_PER_PRINCIPAL = 8;

/** Why a stream's credential no longer holds: the rule a request with it now gets, and why. */
export interface StreamLapse {
  rule: string;
  reason: string;
}

/**
 * What the heartbeat's check says when the stream came with a cookie session that is over:
 * Sign out (in this tab or another), its 8 h, or a newer sign-in pushing it out. That is the
 * inbox's own session ending, as an MCP session's idle timeout is, not a credential that
 * stopped holding: the stream ends without a warning or an audit row. A session that another
 * request of the same cookie ended because its credential was refused is not over in this
 * sense: the check returns that refusal instead.
 */
export const SESSION_OVER = 'session-over';

export interface EventStreamOptions {
  inbox: Inbox;
  viewer: InboxViewer;
  /** Whether the viewer came with a cookie session (the page then offers to sign out). */
  session: boolean;
  /** Asked at every heartbeat: why the stream's credential no longer holds for the same viewer (or SESSION_OVER), or undefined while it does. Either ends the stream. */
  lapse: () => Promise<StreamLapse | typeof SESSION_OVER | undefined>;
  /** Told once when the stream is ended for a lapse (a revocation is a security event: the log and the audit log say so). */
  onLapse?: (lapse: StreamLapse) => void;
  /** Told once when the stream is ended because its cookie session is over (for the log). */
  onSessionOver?: () => void;
  heartbeatMs?: number;
  /** Told how much was left unread when the stream is closed for it (for the log). */
  onUnread?: (unreadBytes: number) => void;
}

/** An open event stream, as the one who opened it may end it. */
export interface InboxEventStream {
  /** Sends a last `closed` event with the reason (the page then stops reconnecting) and ends the stream. */
  close(reason: string): void;
  onClose(fn: () => void): void;
}

/**
 * GET /admin/inbox/events: Server-Sent Events. First `snapshot` (what the viewer may see now,
 * and the server's clock, so the page's countdowns do not depend on the browser's), then
 * `added` and `removed` as the inbox changes, each filtered to the viewer exactly as
 * /admin/inbox/items is. A comment every 15 s keeps proxies from closing an idle stream and
 * rechecks the credential: a revoked key ends the stream within one heartbeat, and the page's
 * reconnect then meets the 401. The inbox listener is removed when the stream closes.
 */
export function streamInboxEvents(res: ServerResponse, options: EventStreamOptions): InboxEventStream {
  const { inbox, viewer } = options;
  let closed = false;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Accel-Buffering': 'no',
  });
  const write = (text: string) => {
    if (closed) return;
    const unread = res.writableLength;
    if (unread > MAX_UNREAD_BYTES) {
      cleanup();
      // Destroyed, not ended: ending would wait for the reader to take what is queued.
      res.destroy();
      options.onUnread?.(unread);
      return;
    }
    res.write(text);
  };
  const send = (event: string, data: unknown) => write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  write('retry: 3000\n\n');
  send('snapshot', { items: inbox.visibleTo(viewer), now: Date.now(), viewer, session: options.session });

  const stop = inbox.onChange((event) => {
    if (event.type === 'added') {
      const item = viewOf(viewer, event.item);
      if (item) send('added', { item, now: Date.now() });
    } else if (maySee(viewer, event)) {
      send('removed', { id: event.id, outcome: event.outcome });
    }
  });
  const heartbeat = setInterval(() => {
    write(': heartbeat\n\n');
    options.lapse().then(
      (lapse) => (lapse === SESSION_OVER ? endQuietly() : lapse && endFor(lapse)),
      () => endFor({ rule: 'auth:error', reason: 'the credential could not be checked again' }),
    );
  }, options.heartbeatMs ?? HEARTBEAT_MS);
  heartbeat.unref();
  function cleanup() {
    if (closed) return;
    closed = true;
    stop();
    clearInterval(heartbeat);
  }
  function end() {
    if (closed) return;
    cleanup();
    res.end();
  }
  // A check that comes back after the stream closed for another reason ended nothing.
  function endFor(lapse: StreamLapse) {
    if (closed) return;
    end();
    options.onLapse?.(lapse);
  }
  function endQuietly() {
    if (closed) return;
    end();
    options.onSessionOver?.();
  }
  res.once('close', cleanup);
  return {
    close: (reason) => {
      send('closed', { reason });
      end();
    },
    onClose: (fn) => (closed || res.destroyed ? fn() : res.once('close', fn)),
  };
}

/**
 * The open event streams, per principal, so that no principal holds more than
 * MAX_STREAMS_PER_PRINCIPAL of them (each costs a listener on the inbox and up to
 * MAX_UNREAD_BYTES of memory while its reader lags).
 */
@Injectable()
export class InboxEventStreams {
  private readonly logger = new Logger('Inbox');
  /** Per principal, its open streams, oldest first. */
  private readonly open = new Map<string, InboxEventStream[]>();

  get count(): number {
    let n = 0;
    for (const streams of this.open.values()) n += streams.length;
    return n;
  }

  start(res: ServerResponse, options: Omit<EventStreamOptions, 'onUnread' | 'onSessionOver'>): InboxEventStream {
    const { principal } = options.viewer;
    const stream = streamInboxEvents(res, {
      ...options,
      onUnread: (unreadBytes) => this.logger.warn(`closed an inbox event stream its reader stopped reading (principal ${principal}, ${unreadBytes} bytes unread)`),
      onLapse: (lapse) => {
        this.logger.warn(`ended an inbox event stream: its credential no longer holds (principal ${principal}, ${lapse.rule}: ${lapse.reason})`);
        options.onLapse?.(lapse);
      },
      onSessionOver: () => this.logger.log(`ended an inbox event stream: its inbox session is over, signed out, expired or replaced (principal ${principal})`),
    });
    const streams = this.open.get(principal) ?? [];
    this.open.set(principal, streams);
    streams.push(stream);
    stream.onClose(() => {
      const at = streams.indexOf(stream);
      if (at !== -1) streams.splice(at, 1);
      if (streams.length === 0 && this.open.get(principal) === streams) this.open.delete(principal);
    });
    while (streams.length > MAX_STREAMS_PER_PRINCIPAL) {
      const oldest = streams.shift()!;
      oldest.close(`the inbox is open in more than ${MAX_STREAMS_PER_PRINCIPAL} places for ${principal}`);
    }
    return stream;
  }
}
