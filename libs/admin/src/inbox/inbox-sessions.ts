import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Injectable } from '@nestjs/common';

export const INBOX_COOKIE = 'switchboard_inbox';
/** The only path the browser sends the cookie to, and the only routes that read it. */
export const INBOX_PATH = '/admin/inbox';
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
/** Bound on live sessions (memory); past it the oldest is forgotten, and its owner logs in again. */
const MAX_SESSIONS = 10_000;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

interface Session {
  /** The credential given at login, checked again on every request so a revoked key ends the session at once. */
  token: string;
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

  create(token: string): string {
    this.prune();
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, { token, expiresAt: Date.now() + SESSION_TTL_MS });
    return id;
  }

  /** The credential behind the request's cookie, if it names a live session. */
  tokenOf(req: IncomingMessage): { id: string; token: string } | undefined {
    const id = sessionIdOf(req);
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= Date.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    return { id, token: session.token };
  }

  end(id: string): void {
    this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(id);
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
