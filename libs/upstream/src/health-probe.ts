import { ErrorCode, McpError, type JsonRpcPeer } from '@switchboard/core';

const HEALTH_PING_TIMEOUT_MS = 10_000;
const FAILED_PINGS_BEFORE_RECONNECT = 2;
const DEFAULT_HEALTH_INTERVAL_MS = 30_000;

/** What a HealthProbe reads of its connection and tells it. */
export interface ProbedConnection {
  /** The peer of the established session, if there is one. */
  peer(): JsonRpcPeer | undefined;
  /** The server answered a ping: a degraded connection is ready again. */
  answered(): void;
  /** The connection is to be treated as lost (and reconnected). */
  lost(reason: string): void;
  /** One ping failed, not yet enough to give the connection up. */
  trouble(reason: string): void;
}

/**
 * The health checks of one upstream connection: a ping every interval, and one at once when
 * something looks wrong (a request that failed on the transport, a transport error). A
 * server that cannot answer twice in a row, or that cannot be reached at all, is lost.
 */
export class HealthProbe {
  private failedPings = 0;
  private probing = false;
  private timer?: NodeJS.Timeout;

  constructor(private readonly connection: ProbedConnection) {}

  start(everyMs = DEFAULT_HEALTH_INTERVAL_MS): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.probe(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** A new session: the failures of the one before count no more. */
  connected(): void {
    this.failedPings = 0;
  }

  /** One ping with a short timeout; a connection that cannot answer it is treated as lost. */
  async probe(): Promise<void> {
    const peer = this.connection.peer();
    if (!peer || this.probing) return;
    this.probing = true;
    try {
      await peer.request('ping', undefined, { timeoutMs: HEALTH_PING_TIMEOUT_MS }).catch((err: unknown) => {
        // An error answered is an answer: the server is there (one that never implemented
        // ping says -32601). Only no answer in time, or a connection that broke, is a failure.
        if (!(err instanceof McpError) || err.code === ErrorCode.RequestTimeout || err.code === ErrorCode.ConnectionClosed) throw err;
      });
      this.failedPings = 0;
      this.connection.answered();
    } catch (err) {
      if (peer !== this.connection.peer()) return;
      this.failedPings++;
      // A transport-level failure (refused, reset) is definitive; a slow answer gets another chance.
      const unreachable = !(err instanceof McpError);
      if (unreachable) this.connection.lost(`it could not be reached: ${failureText(err)}`);
      else if (this.failedPings >= FAILED_PINGS_BEFORE_RECONNECT) this.connection.lost('it stopped answering pings');
      else this.connection.trouble('a health check failed');
    } finally {
      this.probing = false;
    }
  }
}

/** An error's message, with its cause's where it has one (fetch says only "fetch failed"). */
function failureText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return cause && cause !== err.message ? `${err.message} (${cause})` : err.message;
}
