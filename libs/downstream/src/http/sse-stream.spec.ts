import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { MAX_UNREAD_BYTES, SseStream } from './sse-stream.js';

/** A response whose host reads nothing: every write stays queued. */
class UnreadResponse extends EventEmitter {
  writableLength = 0;
  destroyed = false;
  writeHead(): this {
    return this;
  }
  flushHeaders(): void {}
  write(chunk: string): boolean {
    this.writableLength += Buffer.byteLength(chunk);
    return false;
  }
  end(): void {}
  destroy(): void {
    this.destroyed = true;
    this.writableLength = 0;
    this.emit('close');
  }
}

describe('SseStream', () => {
  it('closes a stream whose host left more than MAX_UNREAD_BYTES unread, instead of queueing without end', () => {
    const res = new UnreadResponse();
    const onUnread = vi.fn();
    const onClose = vi.fn();
    const stream = new SseStream(res as unknown as ServerResponse, {}, onUnread);
    stream.onClose(onClose);
    const message = 'x'.repeat(64 * 1024);
    for (let writes = 0; writes < 1000 && !stream.closed; writes++) stream.write('message', message);
    expect(stream.closed).toBe(true);
    expect(res.destroyed).toBe(true);
    expect(onClose).toHaveBeenCalledOnce();
    expect(onUnread).toHaveBeenCalledOnce();
    expect(onUnread.mock.calls[0][0]).toBeGreaterThan(MAX_UNREAD_BYTES);
    expect(stream.write('message', message)).toBe(false);
  });

  it('sends one message larger than the limit whole when nothing is waiting before it', () => {
    const res = new UnreadResponse();
    const stream = new SseStream(res as unknown as ServerResponse);
    stream.write('message', 'x'.repeat(MAX_UNREAD_BYTES + 1));
    expect(stream.closed).toBe(false);
    expect(res.writableLength).toBeGreaterThan(MAX_UNREAD_BYTES);
  });
});
