import type { JsonRpcMessage, LogLevel, PeerRequestOptions, RequestId, SendOptions } from '@switchboard/core';

type Item = Record<string, unknown>;

/**
 * Who is behind a session and how that was established. Until authentication arrives the
 * HTTP transports serve loopback only (principal `anonymous`, method `loopback`) and stdio
 * serves the user who launched the process (method `stdio`).
 */
export interface Principal {
  id: string;
  authMethod: string;
  /** From the key or token; what policies match on. */
  roles?: readonly string[];
  groups?: readonly string[];
  /** What the credential check of long-lived streams looks at (AuthPrincipal's). */
  credential?: { keyId?: number; expiresAt?: number };
}

/**
 * What the relay needs of a downstream session, whatever its transport (Streamable HTTP,
 * HTTP+SSE, stdio). The transport owns the wire; the relay owns the meaning.
 */
export interface DownstreamSession {
  readonly id: string;
  readonly transport: 'streamable-http' | 'sse' | 'stdio';
  readonly principal: Principal;
  protocolVersion: string;
  clientInfo?: Item;
  clientCapabilities: Item;
  /**
   * What initialize advertised to this host, fixed for the session: the gateway sends it
   * no notification of a capability it was not given (notification-fanout.ts).
   */
  serverCapabilities?: Item;
  /** True once the host sent notifications/initialized. */
  initialized: boolean;
  /** Set by logging/setLevel; undefined means the default threshold. */
  logLevel?: LogLevel;
  /** Delivers a message to the host; relatedRequestId puts it on that request's stream. */
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void>;
  /** Asks the host something (a relayed sampling, elicitation or roots request) and waits for its answer. */
  request(method: string, params: Item | undefined, options?: PeerRequestOptions): Promise<Item>;
  /**
   * Whether a request sent now would reach the host: on the stream of its request
   * `relatedRequestId` while that is open, else on a stream of the session's own. Absent
   * where the transport always has one (stdio, HTTP+SSE); Streamable HTTP has none when
   * the host opened no GET stream (the spec makes it optional).
   */
  canReach?(relatedRequestId?: RequestId): boolean;
}

/** Every live session, so notifications can be fanned out. */
export class SessionDirectory {
  private readonly sessions = new Map<string, DownstreamSession>();
  private readonly closeHooks = new Set<(session: DownstreamSession) => void>();

  add(session: DownstreamSession): void {
    this.sessions.set(session.id, session);
  }

  get(id: string): DownstreamSession | undefined {
    return this.sessions.get(id);
  }

  remove(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    for (const hook of this.closeHooks) hook(session);
  }

  onClose(hook: (session: DownstreamSession) => void): void {
    this.closeHooks.add(hook);
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Sessions that finished the handshake (only those may receive notifications). */
  *initialized(): Iterable<DownstreamSession> {
    for (const s of this.sessions.values()) if (s.initialized) yield s;
  }

  all(): IterableIterator<DownstreamSession> {
    return this.sessions.values();
  }
}
