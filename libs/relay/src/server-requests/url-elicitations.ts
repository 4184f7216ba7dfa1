import { ErrorCode, McpError, type JsonRpcNotification } from '@switchboard/core';
import type { DownstreamSession } from '../session.js';
import { hostCanAnswer } from './host-capability.js';

type Item = Record<string, unknown>;

/**
 * URL-mode elicitations a host was given, so that the upstream's later
 * `notifications/elicitation/complete` reaches that host: one it accepted, and each one an
 * upstream's -32042 (URL elicitation required) error carried, whose completion tells the
 * host it may retry. Kept per upstream, as each upstream picks its own ids, for `ttlMs`.
 */
export class UrlElicitations {
  private readonly waiting = new Map<string, { session: DownstreamSession; until: number }>();

  constructor(private readonly ttlMs: () => number) {}

  /** The host `session` took the URL elicitation `elicitationId` from `server`. */
  given(session: DownstreamSession, server: string, elicitationId: string): void {
    const now = Date.now();
    for (const [key, e] of this.waiting) if (e.until < now) this.waiting.delete(key);
    this.waiting.set(keyOf(server, elicitationId), { session, until: now + this.ttlMs() });
  }

  /** A request the host `session` sent to `server` failed: a -32042 gives it the elicitations it lists. */
  failed(session: DownstreamSession, server: string, err: unknown): void {
    if (!(err instanceof McpError) || err.code !== ErrorCode.UrlElicitationRequired) return;
    if (!hostCanAnswer(session, 'elicitation/create', { mode: 'url' })) return;
    const listed = (err.data as Item | undefined)?.elicitations;
    if (!Array.isArray(listed)) return;
    for (const e of listed as Item[]) {
      if (e?.mode === 'url' && typeof e.elicitationId === 'string') this.given(session, server, e.elicitationId);
    }
  }

  /** An upstream's notification: its completion goes to the host that was given that elicitation, once. */
  notification(server: string, n: JsonRpcNotification): void {
    if (n.method !== 'notifications/elicitation/complete') return;
    const key = keyOf(server, String(n.params?.elicitationId ?? ''));
    const found = this.waiting.get(key);
    if (!found) return;
    this.waiting.delete(key);
    if (found.until < Date.now()) return;
    void found.session.send(n).catch(() => undefined);
  }
}

const keyOf = (server: string, elicitationId: string) => `${server}\u0000${elicitationId}`;
