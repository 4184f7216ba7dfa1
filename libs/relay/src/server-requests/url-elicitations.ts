import { ErrorCode, McpError, withoutRelatedTask, type JsonRpcNotification } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import { connectionKey, type UpstreamConnection } from '@switchboard/upstream';
import { SHARED, type ConnectionOwners } from '../connection-owners.js';
import type { DownstreamSession, SessionDirectory } from '../session.js';
import { hostCanAnswer } from './host-capability.js';

type Item = Record<string, unknown>;

/**
 * How many elicitations one session may wait on. A host shows a person each URL it is given,
 * so a handful is the real use; the ids in a -32042 are the upstream's to choose, and
 * without a bound one error listing 100,000 of them was kept whole for `ttlMs`.
 */
export const URL_ELICITATIONS_PER_SESSION = 64;

/**
 * The longest elicitation id the gateway keeps. The spec has it an opaque string the server
 * picks (its examples are UUIDs), with no bound, and each one kept is a key held until its
 * completion or `ttlMs`: 64 ids of a megabyte each were 64 MiB for one session. The same
 * bound as an upstream's task ids (MAX_TASK_ID_CHARS).
 */
export const MAX_ELICITATION_ID_CHARS = 1024;

/**
 * URL-mode elicitations a host was given, so that the upstream's later
 * `notifications/elicitation/complete` reaches that host: one it accepted, and each one an
 * upstream's -32042 (URL elicitation required) error carried, whose completion tells the
 * host it may retry. Kept per upstream connection, as each one's upstream picks its own ids:
 * by server and the connection's owner (ConnectionOwners), so that on an isolated server,
 * where each principal or session has a connection (a process) of its own that may count
 * its ids from 1 as another does, one owner's completion reaches only the host its own
 * connection told (it reached whichever host was told of that id last). Kept for `ttlMs`,
 * and no longer than the host's session: an ended session's are forgotten at once, as
 * nothing can reach it (they and the session itself were held until their time was up, and
 * past it until the next elicitation was given).
 */
export class UrlElicitations {
  private readonly waiting = new Map<string, { session: DownstreamSession; until: number }>();
  /** The keys of `waiting` by session id, to forget a session's when it ends. */
  private readonly bySession = new Map<string, Set<string>>();

  constructor(
    private readonly ttlMs: () => number,
    private readonly sessions: Pick<SessionDirectory, 'get' | 'onClose'>,
    private readonly owners: Pick<ConnectionOwners, 'ownerFor'>,
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {
    sessions.onClose((session) => this.forgetSession(session.id));
  }

  /** The host `session` took the URL elicitation `elicitationId` that `connection` asked it. */
  given(session: DownstreamSession, connection: UpstreamConnection, elicitationId: string): void {
    // An answer or a -32042 that arrived after the session ended: nothing could reach it.
    if (!this.sessions.get(session.id)) return;
    this.dropExpired();
    this.keep(session, this.connectionKeyOf(connection), elicitationId);
  }

  /** A request the host `session` sent on `connection` failed: a -32042 gives it the elicitations it lists. */
  failed(session: DownstreamSession, connection: UpstreamConnection, err: unknown): void {
    if (!(err instanceof McpError) || err.code !== ErrorCode.UrlElicitationRequired) return;
    if (!hostCanAnswer(session, 'elicitation/create', { mode: 'url' })) return;
    const listed = (err.data as Item | undefined)?.elicitations;
    if (!Array.isArray(listed) || !this.sessions.get(session.id)) return;
    this.dropExpired();
    const from = this.connectionKeyOf(connection);
    // The first ones listed, as many as a session may keep: the host is shown them in order.
    let taken = 0;
    let overlong = 0;
    for (const e of listed as Item[]) {
      if (taken === URL_ELICITATIONS_PER_SESSION) break;
      if (e?.mode !== 'url' || typeof e.elicitationId !== 'string') continue;
      if (e.elicitationId.length > MAX_ELICITATION_ID_CHARS) {
        overlong++;
        continue;
      }
      this.keep(session, from, e.elicitationId);
      taken++;
    }
    // The error still reaches the host as the upstream gave it (its URL is what the host acts
    // on, and a completion is optional to the spec); only these completions are not relayed.
    if (overlong > 0) {
      this.logger?.warn(
        { upstream: connection.name, overlong, limit: MAX_ELICITATION_ID_CHARS },
        'a -32042 listed elicitation ids over the length limit: their completions will not reach the host',
      );
    }
  }

  /**
   * A notification of `owner`'s connection to `server` (SHARED: the registry's): its
   * completion goes to the host that connection gave that elicitation, once.
   */
  notification(server: string, n: JsonRpcNotification, owner = SHARED): void {
    if (n.method !== 'notifications/elicitation/complete') return;
    const key = keyOf(connectionKey(server, owner), String(n.params?.elicitationId ?? ''));
    const found = this.waiting.get(key);
    if (!found) return;
    this.drop(key);
    if (found.until < Date.now()) return;
    // Without the upstream's task id, should it name one: the elicitation's id is what the host knows it by.
    void found.session.send(n.params ? { ...n, params: withoutRelatedTask(n.params) } : n).catch(() => undefined);
  }

  /** How many elicitations are waiting for their completion (for tests). */
  get size(): number {
    return this.waiting.size;
  }

  /** Keeps one; past the session's bound its oldest goes (its person has likely moved on). */
  private keep(session: DownstreamSession, from: string, elicitationId: string): void {
    const key = keyOf(from, elicitationId);
    this.drop(key);
    this.waiting.set(key, { session, until: Date.now() + this.ttlMs() });
    let keys = this.bySession.get(session.id);
    if (!keys) this.bySession.set(session.id, (keys = new Set()));
    keys.add(key);
    if (keys.size > URL_ELICITATIONS_PER_SESSION) this.drop(keys.values().next().value!);
  }

  private connectionKeyOf(connection: UpstreamConnection): string {
    return connectionKey(connection.name, this.owners.ownerFor(connection));
  }

  private dropExpired(): void {
    const now = Date.now();
    for (const [key, e] of this.waiting) if (e.until < now) this.drop(key);
  }

  private forgetSession(sessionId: string): void {
    for (const key of this.bySession.get(sessionId) ?? []) this.waiting.delete(key);
    this.bySession.delete(sessionId);
  }

  private drop(key: string): void {
    const found = this.waiting.get(key);
    if (!found) return;
    this.waiting.delete(key);
    const keys = this.bySession.get(found.session.id);
    keys?.delete(key);
    if (keys?.size === 0) this.bySession.delete(found.session.id);
  }
}

const keyOf = (connection: string, elicitationId: string) => `${connection}\u0000${elicitationId}`;
