import { isRequest, type JsonRpcMessage, type SendOptions } from '@switchboard/core';
import type { UpstreamTransport } from './transports/upstream-transport.js';

/**
 * How long a stop waits for the notifications and answers still being sent (a host's
 * cancellation, above all) before it closes the transport, which would abort them: the
 * legacy HTTP+SSE transport aborts its POSTs in flight. The same bound as the DELETE that
 * ends a Streamable HTTP session at close.
 */
export const LAST_SENDS_WAIT_MS = 1000;

/**
 * The notifications and answers a connection is sending, each settled either way: what a
 * stop waits for. A request needs no such wait (closing the peer fails it, and its send may
 * last as long as its answer); a notification or an answer may be the last word the server
 * gets: the cancellation of a call a host abandoned as it left.
 */
export class LastSends {
  private readonly sending = new Set<Promise<void>>();

  /** Sends `message` on `transport`, keeping track of it until it settles unless it is a request. */
  send(transport: UpstreamTransport, message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    const sent = transport.send(message, options);
    if (!isRequest(message)) this.track(sent);
    return sent;
  }

  /** Keeps track of `sent` until it settles. */
  track(sent: Promise<void>): void {
    const settled = sent.catch(() => undefined);
    this.sending.add(settled);
    void settled.then(() => this.sending.delete(settled));
  }

  /** Waits, at most LAST_SENDS_WAIT_MS, for what is being sent. */
  async settled(): Promise<void> {
    if (this.sending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, LAST_SENDS_WAIT_MS)));
    await Promise.race([Promise.all(this.sending), bound]);
    clearTimeout(timer);
  }
}
