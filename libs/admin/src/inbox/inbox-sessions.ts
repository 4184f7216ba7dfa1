import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Injectable } from '@nestjs/common';
import type { AuthRefusal } from '@switchboard/auth';
import { HEARTBEAT_MS } from './inbox-events.js';

export const INBOX_COOKIE = 'switchboard_inbox';
/** The only path the browser sends the cookie to, and the only routes that read it. */
export const INBOX_PATH = '/admin/inbox';
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
/**
 * Bound on one principal's live sessions (browsers, profiles, sign-ins): past it that
 * principal's own oldest is forgotten, so a caller that signs in again and again only ever
 * signs itself out.
 */
export const MAX_SESSIONS_PER_PRINCIPAL = 20;
/**
 * Bound on all live sessions (memory: each holds a credential of up to 8 KiB). One principal
 * cannot reach it; past it the oldest session of whoever holds the most is forgotten, never
 * one of someone who holds fewer.
 */
export const MAX_SESSIONS = 10_000;
/**
 * How long a session ended because its credential was refused is remembered as such: four
 * heartbeats, so every event stream of that cookie has rechecked (and said why) by then, even
 * on a busy daemon. A stream that rechecks later still ends, only quietly.
 */
export const REFUSAL_KEPT_MS = 4 * HEARTBEAT_MS;
/** Bound on remembered refusals (a few hundred bytes each): past it the oldest is forgotten. */
export const MAX_REFUSALS = MAX_SESSIONS;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

interface Session {
  /**
   * The credential given at login. Kept, not a digest of it: it is checked again on every
   * request, by the same authenticator a header goes to, so that a revoked key or an expired
   * JWT ends the session at once, and that check needs the credential itself.
   */
  token: string;
  principal: string;
  expiresAt: number;
}

/**
 * Browser sessions of the inbox page. A browser cannot send a bearer header when it navigates,
 * so the page's login form trades a key or token for a random cookie id; the map from id to
 * credential stays in this process (a restart logs everyone out, as it ends every pending
 * question anyway). The id is 32 random bytes: it cannot be guessed, only stolen, and the
 * cookie is HttpOnly (no script reads it) and SameSite=Strict (no other site sends it).
 */
@Injectable()
export class InboxSessions {
  private readonly sessions = new Map<string, Session>();
  /** Each principal's session ids, oldest first. */
  private readonly byPrincipal = new Map<string, string[]>();
  /**
   * Sessions ended because their credential was refused, with why, oldest first (all are kept
   * equally long, so also soonest to expire first). Whichever request of a cookie meets the
   * refusal first ends the session; the cookie's event streams learn why from here rather
   * than taking it for a sign-out, so a revocation with two tabs open is still audited.
   */
  private readonly refusals = new Map<string, { refusal: AuthRefusal; until: number }>();

  /** A new session for `principal`, who proved it with `token`. */
  create(token: string, principal: string): string {
    this.prune();
    while ((this.byPrincipal.get(principal)?.length ?? 0) >= MAX_SESSIONS_PER_PRINCIPAL) this.end(this.byPrincipal.get(principal)![0]);
    while (this.sessions.size >= MAX_SESSIONS) this.end(this.largestHolding()[0]);
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, { token, principal, expiresAt: Date.now() + SESSION_TTL_MS });
    const own = this.byPrincipal.get(principal) ?? [];
    own.push(id);
    this.byPrincipal.set(principal, own);
    return id;
  }

  /** The credential behind the request's cookie, if it names a live session. */
  tokenOf(req: IncomingMessage): { id: string; token: string } | undefined {
    const id = sessionIdOf(req);
    const session = id === undefined ? undefined : this.live(id);
    return session && { id: id!, token: session.token };
  }

  /** Whether `id` still names a session: not signed out, past its 8 h, or forgotten for a newer one. */
  has(id: string): boolean {
    return this.live(id) !== undefined;
  }

  /** Ends the session; with `refusal` when its credential was refused, which refusalOf() then tells for a while. */
  end(id: string, refusal?: AuthRefusal): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    if (refusal) this.rememberRefusal(id, refusal);
    const own = this.byPrincipal.get(session.principal) ?? [];
    const at = own.indexOf(id);
    if (at !== -1) own.splice(at, 1);
    if (own.length === 0) this.byPrincipal.delete(session.principal);
  }

  /** Why the session `id` was ended, when it was for a refused credential in the last REFUSAL_KEPT_MS. */
  refusalOf(id: string): AuthRefusal | undefined {
    const kept = this.refusals.get(id);
    if (kept && kept.until <= Date.now()) {
      this.refusals.delete(id);
      return undefined;
    }
    return kept?.refusal;
  }

  get size(): number {
    return this.sessions.size;
  }

  private live(id: string): Session | undefined {
    const session = this.sessions.get(id);
    if (session && session.expiresAt <= Date.now()) {
      this.end(id);
      return undefined;
    }
    return session;
  }

  /** The session ids of the principal holding the most. */
  private largestHolding(): string[] {
    let largest: string[] = [];
    for (const ids of this.byPrincipal.values()) if (ids.length > largest.length) largest = ids;
    return largest;
  }

  private rememberRefusal(id: string, refusal: AuthRefusal): void {
    const now = Date.now();
    for (const [old, kept] of this.refusals) {
      if (kept.until > now && this.refusals.size < MAX_REFUSALS) break;
      this.refusals.delete(old);
    }
    this.refusals.set(id, { refusal, until: now + REFUSAL_KEPT_MS });
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, session] of this.sessions) if (session.expiresAt <= now) this.end(id);
  }
}

/** The session id in the request's Cookie header, when it has the shape of one. */
export function sessionIdOf(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== INBOX_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (SESSION_ID.test(value)) return value;
  }
  return undefined;
}

/**
 * The Set-Cookie value for a session id (or, without one, the value that deletes the cookie).
 * `Secure` only when the page was reached over TLS (a proxy in front says so): on plain
 * http://127.0.0.1 a Secure cookie would not be stored.
 */
export function sessionCookie(req: IncomingMessage, id: string | undefined): string {
  const secure = (req.socket as { encrypted?: boolean } | undefined)?.encrypted || req.headers['x-forwarded-proto'] === 'https';
  const value = id ?? '';
  const maxAge = id === undefined ? 0 : SESSION_TTL_MS / 1000;
  return `${INBOX_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=${INBOX_PATH}; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
}
