import type { ServerResponse } from 'node:http';

const KEEPALIVE_MS = 15_000;

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
