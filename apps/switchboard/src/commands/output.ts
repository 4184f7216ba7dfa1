import { once } from 'node:events';
import type { Writable } from 'node:stream';

/** Lines are gathered up to this many characters before a write: one syscall per many rows. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Writes text to a stream in chunks, waiting for 'drain' when the stream's buffer is full,
 * so a large export holds at most one chunk and the stream's high-water mark in memory.
 * A stream error (EPIPE, ENOSPC) surfaces from the next write or from end().
 */
export class ChunkedOutput {
  private pending = '';
  private failure: Error | undefined;

  constructor(private readonly stream: Writable) {
    stream.on('error', (err) => (this.failure ??= err));
  }

  async write(text: string): Promise<void> {
    this.pending += text;
    if (this.pending.length >= CHUNK_CHARS) await this.flush();
  }

  async flush(): Promise<void> {
    this.throwIfFailed();
    if (this.pending === '') return;
    const chunk = this.pending;
    this.pending = '';
    if (!this.stream.write(chunk)) await once(this.stream, 'drain').catch((err: Error) => (this.failure ??= err));
    this.throwIfFailed();
  }

  /** Flushes; for a file also ends it and waits until its bytes are handed to the OS. */
  async end(closeStream: boolean): Promise<void> {
    await this.flush();
    if (!closeStream) return;
    this.stream.end();
    await once(this.stream, 'finish').catch((err: Error) => (this.failure ??= err));
    this.throwIfFailed();
  }

  private throwIfFailed(): void {
    if (this.failure) throw new OutputError(this.failure);
  }
}

/** Writing the output failed (disk full, reader gone), as opposed to reading the log. */
export class OutputError extends Error {
  readonly code: string | undefined;

  constructor(cause: Error) {
    super(cause.message, { cause });
    this.code = (cause as NodeJS.ErrnoException).code;
  }
}

/** The reader went away (`| head`): not a failure of ours. */
export const isBrokenPipe = (err: unknown): boolean => err instanceof OutputError && err.code === 'EPIPE';
