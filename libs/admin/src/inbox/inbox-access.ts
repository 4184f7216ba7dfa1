import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { LOOPBACK_PRINCIPAL, type AuthPrincipal, type AuthRefusal, type HttpAuthResult } from '@switchboard/auth';
import { callerName } from '@switchboard/core';
import type { InboxViewer } from '@switchboard/inbox';
import { ADMIN_OPTIONS, ADMIN_ROLE, type AdminOptions } from '../admin-options.js';
import { sendAuthRefusal } from '../auth-refusal.js';
import { sendError } from '../json-response.js';
import { ASSETS } from './inbox-page.js';
import { INBOX_PATH, InboxSessions, sessionCookie, sessionIdOf } from './inbox-sessions.js';

/** Who is looking at the inbox, and through which browser session (if a cookie brought them). */
export interface InboxCaller {
  viewer: InboxViewer;
  principal: AuthPrincipal;
  /** The cookie session id, when the credential came from one (the page then offers to sign out). */
  sessionId?: string;
}

type Resolved = { caller: InboxCaller; refusal?: undefined } | { refusal: AuthRefusal; caller?: undefined };

/** Routes a browser may load without being signed in: the page (which then shows the login form), its assets, login, logout. */
const OPEN_ROUTES = new Set([
  'GET /admin/inbox',
  'HEAD /admin/inbox',
  ...Object.keys(ASSETS).map((name) => `GET ${INBOX_PATH}/${name}`),
  'POST /admin/inbox/login',
  'POST /admin/inbox/logout',
]);
/** Bound on what is handed to the authenticator from the login form: a JWT is a few KiB at most. */
const MAX_TOKEN_LENGTH = 8192;
/** A b64token (RFC 6750): what an `Authorization: Bearer` header carries as one token (the authenticator refuses anything else). */
const TOKEN_SHAPE = /^[A-Za-z0-9._~+/-]+=*$/;

export function inboxPathOf(req: IncomingMessage): string | undefined {
  const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  const query = url.indexOf('?');
  // Express routes case-insensitively, with or without a trailing slash: compare the same way.
  const path = (query === -1 ? url : url.slice(0, query)).toLowerCase().replace(/\/+$/, '');
  return path === INBOX_PATH || path.startsWith(`${INBOX_PATH}/`) ? path : undefined;
}

/**
 * The inbox's own admission, behind the Host/Origin check the admin guard runs first. Unlike
 * the rest of /admin it does not need the admin role: every authenticated principal may
 * answer the questions its own calls raised (and approvals asked of its roles); admins see
 * everyone's. With `auth.mode` other than `required` the local user is the admin of their
 * own daemon.
 *
 * Credentials, in order: an `Authorization`/`X-API-Key` header (tools, scripts), else the
 * inbox session cookie (the browser, after the login form), else nothing (loopback mode).
 * The cookie is read here and nowhere else, so it opens the inbox routes only. A cookie's
 * credential is checked again on every request: `switchboard keys revoke` or an expired JWT
 * ends the browser session at once.
 */
@Injectable()
export class InboxAccess {
  private readonly callers = new WeakMap<IncomingMessage, InboxCaller>();

  constructor(
    @Inject(ADMIN_OPTIONS) private readonly options: AdminOptions,
    private readonly sessions: InboxSessions,
  ) {}

  /** Middleware step for every /admin/inbox* request; `next()` with the caller known, or for an open route. */
  async admit(req: IncomingMessage, res: ServerResponse, path: string, next: () => void): Promise<void> {
    if (!this.options.inbox) return sendError(res, 404, 'the inbox is not available: this daemon was started without one');
    const resolved = await this.resolve(req, res);
    if (resolved.caller) {
      this.callers.set(req, resolved.caller);
      return next();
    }
    if (OPEN_ROUTES.has(`${req.method} ${path}`)) return next();
    return sendAuthRefusal(req, res, resolved.refusal, this.options.onRefused);
  }

  /** The caller admit() established for this request; undefined on an open route without one. */
  callerOf(req: IncomingMessage): InboxCaller | undefined {
    return this.callers.get(req);
  }

  /**
   * Who the request is from now. Also used by the event stream to recheck its caller while it
   * stays open. A cookie that no longer names a live session, or whose credential is refused,
   * is deleted from the browser (when `res` is given) and the request is judged without it.
   */
  async resolve(req: IncomingMessage, res?: ServerResponse): Promise<Resolved> {
    const hasHeader = req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined;
    let cookieRefusal: AuthRefusal | undefined;
    if (!hasHeader && sessionIdOf(req) !== undefined) {
      const session = this.sessions.tokenOf(req);
      if (session) {
        const result = await this.authenticateToken(session.token);
        if (result.principal) return { caller: this.callerFor(result.principal, session.id) };
        this.sessions.end(session.id, result.refusal);
        cookieRefusal = result.refusal;
      }
      if (res && !res.headersSent) res.setHeader('Set-Cookie', sessionCookie(req, undefined));
    }
    const result: HttpAuthResult = this.options.authenticate ? await this.options.authenticate(req) : { principal: LOOPBACK_PRINCIPAL };
    if (result.principal) return { caller: this.callerFor(result.principal) };
    // "Revoked" says more than "a credential is required" about why a signed-in browser is out.
    return { refusal: result.refusal.rule === 'auth:missing' && cookieRefusal ? cookieRefusal : result.refusal };
  }

  /**
   * The login form's credential, checked exactly as a header would be. Refused when it is not
   * a credential at all: under `auth.mode: none` the authenticator lets a request without one
   * through as the loopback user, and a login must not turn garbage into a session.
   */
  async login(token: unknown): Promise<{ sessionId: string; caller: InboxCaller } | { status: 400 | 401; refusal: AuthRefusal }> {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !TOKEN_SHAPE.test(token)) {
      return { status: 400, refusal: { rule: 'auth:missing', reason: 'token must be an API key or a JWT, without spaces or quotes' } };
    }
    const result = await this.authenticateToken(token);
    if (!result.principal) return { status: 401, refusal: result.refusal };
    const sessionId = this.sessions.create(token, result.principal.id);
    return { sessionId, caller: this.callerFor(result.principal, sessionId) };
  }

  /** Whether the cookie session `id` is still there (not signed out, expired or pushed out by newer sign-ins). */
  signedIn(id: string): boolean {
    return this.sessions.has(id);
  }

  /** Why the cookie session `id` was ended, when it was because its credential was refused (recently: see REFUSAL_KEPT_MS). */
  refusalOf(id: string): AuthRefusal | undefined {
    return this.sessions.refusalOf(id);
  }

  logout(req: IncomingMessage): void {
    const id = sessionIdOf(req);
    if (id !== undefined) this.sessions.end(id);
  }

  private async authenticateToken(token: string): Promise<HttpAuthResult> {
    if (!this.options.authenticate) return { refusal: { rule: 'auth:error', reason: 'this daemon checks no credentials' } };
    // The authenticator reads a request's headers only: hand it the one a bearer client would send.
    const synthetic = { method: 'POST', url: `${INBOX_PATH}/login`, headers: { authorization: `Bearer ${token}` } };
    const result = await this.options.authenticate(synthetic as unknown as IncomingMessage);
    if (result.principal && result.principal.authMethod === 'loopback') {
      return { refusal: { rule: 'auth:unknown-key', reason: 'the token is not a credential this daemon knows' } };
    }
    return result;
  }

  private callerFor(principal: AuthPrincipal, sessionId?: string): InboxCaller {
    const admin = principal.roles.includes(ADMIN_ROLE) || this.options.config().auth.mode !== 'required';
    const { rolesOf } = this.options;
    // Asked each time it is needed: an open event stream outlives policy reloads.
    const roles = () => rolesOf?.(principal) ?? [];
    return { viewer: { principal: callerName(principal), admin, roles }, principal, sessionId };
  }
}
