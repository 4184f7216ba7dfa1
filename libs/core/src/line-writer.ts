/** Where a LineWriter's text goes: a stream's write, in effect. */
export type WriteText = (text: string, done: (error?: Error | null) => void) => void;

/**
 * Writes newline-delimited messages, joining every line queued during one turn of the event
 * loop into a single write. On a pipe each write is a system call and a wake-up of the reader;
 * under load many requests arrive in the same turn, and one write for all of them is where
 * a stdio upstream gets most of its throughput back. A lone message waits only until the end
 * of the current turn (setImmediate), not for a timer.
 */
export class LineWriter {
  private queued: string[] = [];
  private batch?: { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void };

  constructor(private readonly write: WriteText) {}

  /** Queues one line (without its newline); settles when the write that carries it does. */
  push(line: string): Promise<void> {
    this.queued.push(line);
    if (!this.batch) {
      let resolve!: () => void;
      let reject!: (error: Error) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      // Callers that ignore the outcome must not turn a failed write into an unhandled rejection.
      promise.catch(() => undefined);
      this.batch = { promise, resolve, reject };
      setImmediate(() => this.flush());
    }
    return this.batch.promise;
  }

  private flush(): void {
    const batch = this.batch!;
    const text = this.queued.length === 1 ? `${this.queued[0]}\n` : `${this.queued.join('\n')}\n`;
    this.batch = undefined;
    this.queued = [];
    try {
      this.write(text, (error) => (error ? batch.reject(error) : batch.resolve()));
    } catch (error) {
      batch.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
