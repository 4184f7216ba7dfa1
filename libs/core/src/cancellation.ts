/**
 * What the gateway's own code needs of an AbortSignal: whether it is aborted, and to be told
 * when it is. An AbortSignal is one; so is a Cancellation.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  /** What `abort` was given, as an AbortSignal's: for a request of the other side's, an `Abandonment`. */
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A CancelSignal and the means to abort it, for what every request carries: whether its
 * sender cancelled it. An AbortController would do, but it is an EventTarget: in Node 20,
 * making one costs ~2.6 µs and adding and removing a listener ~1.7 µs more, on every
 * request, for a cancellation that hardly ever comes. This one is an array at most.
 *
 * As with an AbortSignal, a listener runs at most once (abort happens once), one added
 * after the abort never runs, and the same listener added twice runs once.
 */
export class Cancellation implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  /**
   * Set by `answerDecided`: the request's answer is decided and recorded, so a cancel that
   * arrives now is late (the peer ignores it and sends the answer). A close still aborts.
   */
  decided = false;
  private listeners: (() => void)[] | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const listener of listeners ?? []) {
      try {
        listener();
      } catch (err) {
        // Like an EventTarget: one listener's error does not keep the others from running,
        // and it is not swallowed either.
        process.nextTick(() => {
          throw err;
        });
      }
    }
  }
}

/**
 * Why a request of the other side's was given up before its answer, as its signal's reason
 * (JsonRpcPeer sets it): the audit log records what the sender got, which differs.
 *
 * - `cancelled`: the sender sent notifications/cancelled (with its `reason`, if any). It gets
 *   no answer at all (the spec).
 * - `closed`: the peer closed under it (the session ended). `told` is what the transport
 *   answered the request with as it closed (a Streamable HTTP POST still open gets -32000);
 *   absent when nothing could reach the sender (its connection is gone).
 */
export type Abandonment =
  | { kind: 'cancelled'; reason?: string }
  | { kind: 'closed'; told?: { code: number; message: string } };

/**
 * Says that the answer to a request of the other side's is decided and written down (its
 * audit row), and only waits to be released (strict mode waits for the row's journal write
 * or commit). A cancel arriving in that wait is treated as one arriving just after the
 * answer, a race the spec allows: it is ignored and the answer is sent. Otherwise the
 * host would get nothing while its row said what the answer was. Only a peer's own
 * Cancellation can say so; other signals are left as they are.
 */
export function answerDecided(signal: CancelSignal | undefined): void {
  if (signal instanceof Cancellation) signal.decided = true;
}

/** The Abandonment a signal was aborted with, if it was. */
export function abandonmentOf(signal: CancelSignal | undefined): Abandonment | undefined {
  if (!signal?.aborted) return undefined;
  const reason = signal.reason as Abandonment | undefined;
  return reason?.kind === 'cancelled' || reason?.kind === 'closed' ? reason : undefined;
}

/** A signal aborted once any of `signals` is; the one given when only one is. */
export function anyCancelled(...signals: (CancelSignal | undefined)[]): CancelSignal | undefined {
  const present = signals.filter((s): s is CancelSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  const any = new Cancellation();
  const abort = () => {
    for (const signal of present) signal.removeEventListener('abort', abort);
    any.abort();
  };
  if (present.some((signal) => signal.aborted)) any.abort();
  else for (const signal of present) signal.addEventListener('abort', abort, { once: true });
  return any;
}
