import type { ServerResponse } from 'node:http';

const KEEPALIVE_MS = 15_000;

/**
 * What a host may leave unread on one stream. Past it the stream is closed rather than fed:
 * a host that stops reading (a frozen process whose connection stays open) would otherwise
 * have every message for it (log lines, list changes, responses) held in the daemon's memory
 * for as long as the connection lives. The check comes before a write, so one large message
 * still goes out whole; a host that was merely slow opens the stream again.
 */
export const MAX_UNREAD_BYTES = 16 * 1024 * 1024;

/**
 * One server-sent-events stream. A comment line every 15 s keeps proxies and idle timeouts
 * from cutting a quiet stream.
 */
export class SseStream {
  private readonly keepalive: NodeJS.Timeout;
  private closedFlag = false;

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string> = {},
    /** Told how much was left unread when the stream is closed for it (for the log). */
    private readonly onUnread?: (unreadBytes: number) => void,
  ) {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      ...headers,
    });
    res.flushHeaders();
    this.keepalive = setInterval(() => this.res.write(': keepalive\n\n'), KEEPALIVE_MS);
    this.keepalive.unref();
    res.once('close', () => this.markClosed());
  }

  get closed(): boolean {
    return this.closedFlag || this.res.destroyed;
  }

  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.res.once('close', fn);
  }

  write(event: string, data: string): boolean {
    if (this.closed) return false;
    const unread = this.res.writableLength;
    if (unread > MAX_UNREAD_BYTES) {
      this.markClosed();
      // Destroyed, not ended: ending would wait for the host to read what is queued.
      this.res.destroy();
      this.onUnread?.(unread);
      return false;
    }
    return this.res.write(`event: ${event}\ndata: ${data}\n\n`);
  }

  end(): void {
    if (this.closed) return;
    this.markClosed();
    this.res.end();
  }

  private markClosed(): void {
    this.closedFlag = true;
    clearInterval(this.keepalive);
  }
}
