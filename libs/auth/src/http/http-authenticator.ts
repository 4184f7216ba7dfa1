import type { IncomingMessage } from 'node:http';
import type { ApiKeyVerifier, KeyVerdict, RefusedKeyHolder } from '../api-keys/api-key-verifier.js';
import { KEY_PREFIX } from '../api-keys/key-material.js';
import type { JwtVerifier, RefusedTokenHolder, TokenVerdict } from '../jwt/jwt-verifier.js';
import { LOOPBACK_PRINCIPAL, type AuthPrincipal } from '../principal.js';
import { unsupportedSchemeReason } from './auth-scheme.js';
import { runStrategy, type PassportStrategy } from './strategy-runner.js';

export type AuthMode = 'none' | 'required';

/** Why a request was not authenticated: the audit row's rule and reason, and what the caller is told. */
export interface AuthRefusal {
  rule: 'auth:missing' | 'auth:unsupported-scheme' | 'auth:two-credentials' | 'auth:malformed' | KeyRefusalRule | TokenRefusalRule | 'auth:error';
  reason: string;
  /** What the caller is told, where `reason` says more than it should learn (a key's name); else `reason`. */
  told?: string;
  /**
   * The revoked or expired key's own principal (RefusedKeyHolder), or a token's refused for
   * its time alone (RefusedTokenHolder): for the audit row only; never told, never admitted.
   */
  attributedTo?: RefusedKeyHolder | RefusedTokenHolder;
  /** For auth:error: seconds until the credential can be checked again, when that is known (the issuer's backoff). */
  retryAfterSec?: number;
}

/** What the caller of a refused request is told (AuthRefusal.told, or the reason). */
export function toldReason(refusal: Pick<AuthRefusal, 'reason' | 'told'>): string {
  return refusal.told ?? refusal.reason;
}
type KeyRefusalRule = Extract<KeyVerdict, { ok: false }>['rule'];
type TokenRefusalRule = Extract<TokenVerdict, { ok: false }>['rule'];

export type HttpAuthResult = { principal: AuthPrincipal; refusal?: undefined } | { refusal: AuthRefusal; principal?: undefined };

type Done = (err: unknown, user?: unknown) => void;

/**
 * A compact JWS as issuers send them: three base64url parts, the first a JSON header (`{"`
 * is `eyJ` in base64url). The last may be empty (an unsigned JWT). Only its shape is looked at.
 */
const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Why an X-API-Key that is no key was refused, when it is a JWT: hosts configured for keys
 * get a token pasted into the key's header, and "unknown API key" alone does not say what
 * to change. Never the value. Worded so that the audit log's redaction leaves it whole: no
 * `Authorization:` label, nothing after "Bearer" that reads as its token.
 */
const JWT_IN_API_KEY = 'unknown API key: this looks like a JWT, which goes in the Authorization header as a Bearer token, not in X-API-Key';

/** `Authorization: Bearer` and anything after it: the scheme is case-insensitive (RFC 9110). */
const BEARER_SCHEME = /^bearer(?:\s|$)/i;
/** One space and one b64token (RFC 6750 section 2.1): what a key (`sbk_...`) and a JWT both are. */
const BEARER_CREDENTIAL = /^bearer [A-Za-z0-9._~+/-]+=*$/i;

/**
 * Why the credential headers are there but hold no credential that could be read, if so:
 * the strategies would find none (passport-http-bearer splits on one space) and the request
 * would count as one without a credential, served anonymously under `auth.mode: none`, though
 * its host meant to send a key. Another Authorization scheme (Basic) is no Bearer credential
 * and is left alone here: beside an X-API-Key it is not the caller's credential, and under
 * `auth.mode: none` it is not read (authenticate() refuses it only where one is required).
 */
function malformedCredential(headers: IncomingMessage['headers']): string | undefined {
  const authorization = headers.authorization;
  if (authorization !== undefined && BEARER_SCHEME.test(authorization) && !BEARER_CREDENTIAL.test(authorization)) {
    return 'the Authorization header is not "Bearer" followed by one space and the token';
  }
  const apiKey = headers['x-api-key'];
  // Worded so that the audit log's redaction leaves it whole: "X-API-Key header is empty"
  // reads to it as a flag and its value, and the row said "X-API-Key [REDACTED] is empty".
  if (apiKey !== undefined && String(apiKey).trim() === '') return 'the API key header (X-API-Key) is empty';
  return undefined;
}

/**
 * Which credential header a request sent more than once, as the refusal names it, if one. Node keeps the first
 * Authorization line and drops the others (and joins X-API-Key lines with ", "), so a
 * valid token followed by any other went unchecked; like a Bearer token beside an
 * X-API-Key, it is two credentials (RFC 6750 section 3.1: more than one method), and
 * neither is chosen. Only a parsed request has raw headers; one made up of headers alone
 * (the inbox's login form) has one line per name.
 */
function repeatedCredentialHeader(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders ?? [];
  let authorizations = 0;
  let apiKeys = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (name === 'authorization' && ++authorizations > 1) return 'Authorization';
    if (name === 'x-api-key' && ++apiKeys > 1) return 'API key (X-API-Key)';
  }
  return undefined;
}

/** A refused key's or token's verdict as the refusal of the request that carried it. */
function refusalOf(verdict: Extract<KeyVerdict | TokenVerdict, { ok: false }>): AuthRefusal {
  const refusal: AuthRefusal = { rule: verdict.rule, reason: verdict.reason, told: 'told' in verdict ? verdict.told : undefined };
  if ('attributedTo' in verdict && verdict.attributedTo) refusal.attributedTo = verdict.attributedTo;
  if ('retryAfterSec' in verdict && verdict.retryAfterSec !== undefined) refusal.retryAfterSec = verdict.retryAfterSec;
  return refusal;
}

/**
 * Why the credential headers a request sent cannot be taken as one credential, if so: two
 * credentials (which of them is the caller? taking the first that passes would let a bad one
 * ride along unchecked, so neither is chosen), or a header that holds none that can be read.
 */
function unreadableCredential(req: IncomingMessage): AuthRefusal | undefined {
  if (req.headers['x-api-key'] !== undefined && /^\s*bearer\s/i.test(req.headers.authorization ?? '')) {
    // Not "Authorization: Bearer and ...": the audit log's redaction took the "and" for the token.
    return { rule: 'auth:two-credentials', reason: 'two credentials were sent, a Bearer token in Authorization and an X-API-Key; send one' };
  }
  const repeated = repeatedCredentialHeader(req);
  if (repeated !== undefined) {
    // Worded so that the audit log's redaction leaves it whole: a colon after Authorization
    // reads to it as a header line, and "X-API-Key headers" as a flag and its value.
    return { rule: 'auth:two-credentials', reason: `two credentials were sent, the ${repeated} header twice; send one` };
  }
  const malformed = malformedCredential(req.headers);
  return malformed === undefined ? undefined : { rule: 'auth:malformed', reason: malformed };
}

/**
 * Establishes who sent an HTTP request, with passport strategies: `Authorization: Bearer`
 * with an API key (`sbk_...`) or, when `auth.jwt` is configured, a JWT from its issuer; or
 * `X-API-Key: <key>`. A credential that is presented must be valid, whatever the mode.
 * Without one, `auth.mode: none` (loopback only) lets the request through as the anonymous
 * loopback principal and `required` refuses it.
 */
export class HttpAuthenticator {
  private readonly verdicts = new WeakMap<IncomingMessage, KeyVerdict | TokenVerdict>();
  private strategies: Promise<PassportStrategy[]> | undefined;

  constructor(
    private readonly keys: ApiKeyVerifier,
    private readonly mode: () => AuthMode,
    private readonly jwt?: JwtVerifier,
  ) {}

  /**
   * Built with the first credential: a loopback daemon whose callers send none never loads
   * the strategies (passport-headerapikey brings all of lodash, ~7 MiB).
   */
  private loadStrategies(): Promise<PassportStrategy[]> {
    return (this.strategies ??= this.buildStrategies());
  }

  private async buildStrategies(): Promise<PassportStrategy[]> {
    const [{ Strategy: BearerStrategy }, { HeaderAPIKeyStrategy }] = await Promise.all([
      import('passport-http-bearer'),
      import('passport-headerapikey'),
    ]);
    const settle = (req: IncomingMessage, verdict: KeyVerdict | TokenVerdict, done: Done) => {
      this.verdicts.set(req, verdict);
      done(null, verdict.ok ? verdict.principal : false);
    };
    const checkKey = (req: IncomingMessage, key: string, done: Done, header: 'authorization' | 'x-api-key' = 'authorization') => {
      let verdict: KeyVerdict;
      try {
        verdict = this.keys.verify(key);
      } catch (err) {
        // The database could not be read: fail closed (rule auth:error), never open.
        return done(err);
      }
      // Only where a JWT would be taken in the other header: without auth.jwt it is refused there too.
      if (!verdict.ok && verdict.rule === 'auth:unknown-key' && header === 'x-api-key' && this.jwt && JWT_SHAPE.test(key)) {
        verdict = { ...verdict, reason: JWT_IN_API_KEY };
      }
      settle(req, verdict, done);
    };
    const checkBearer = (req: IncomingMessage, token: string, done: Done) => {
      if (token.startsWith(KEY_PREFIX) || !this.jwt) return checkKey(req, token, done);
      this.jwt.verify(token).then((verdict) => settle(req, verdict, done), done);
    };
    return [
      new BearerStrategy({ passReqToCallback: true }, checkBearer as never),
      // This strategy hands the request last: (key, done, req).
      new HeaderAPIKeyStrategy({ header: 'X-API-Key', prefix: '' }, true, ((key: string, done: Done, req: IncomingMessage) =>
        checkKey(req, key, done, 'x-api-key')) as never),
    ];
  }

  /**
   * Why the credential a principal was established with no longer holds (the key revoked,
   * expired or deleted, the token expired), or undefined while it does. For what outlives
   * one request (a session and its streams); a database that cannot be read counts as a
   * lapse (auth:error), failing closed.
   */
  credentialLapse(principal: Pick<AuthPrincipal, 'credential'>, now?: number): AuthRefusal | undefined {
    const credential = principal.credential;
    if (credential === undefined) return undefined;
    if (credential.keyId === undefined) {
      const expired = credential.expiresAt !== undefined && credential.expiresAt <= (now ?? Date.now());
      return expired ? { rule: 'auth:expired-token', reason: 'the token expired' } : undefined;
    }
    // A key's lapse comes from its row, not from the expiresAt the session copied: as a request
    // with it is refused, revoked before expired, and with the key's name in the reason (the
    // audit row of the session it ends says which key; the caller is told without it).
    try {
      const lapse = this.keys.lapseOf(credential.keyId, now);
      return lapse && refusalOf(lapse);
    } catch {
      return { rule: 'auth:error', reason: 'the API key could not be checked' };
    }
  }

  async authenticate(req: IncomingMessage): Promise<HttpAuthResult> {
    // Most loopback requests carry neither header: nothing to check, no strategy needs to look
    // (with neither parsed, no line of either name came, so none came twice).
    if (req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined) {
      const unreadable = unreadableCredential(req);
      if (unreadable !== undefined) return { refusal: unreadable };
      // The strategies see the headers only: passport-http-bearer also takes `access_token`
      // from the query string and the body, where Express has parsed them (the admin
      // routes), and a credential in a URL ends up in logs and browser history.
      const headersOnly = { headers: req.headers } as IncomingMessage;
      for (const strategy of await this.loadStrategies()) {
        const outcome = await runStrategy(strategy, headersOnly);
        if ('user' in outcome) return { principal: outcome.user as AuthPrincipal };
        if ('error' in outcome) return { refusal: { rule: 'auth:error', reason: 'the credential could not be checked' } };
        const verdict = this.verdicts.get(headersOnly);
        // The strategy found a credential and it was refused: that is the answer.
        if (verdict && !verdict.ok) return { refusal: refusalOf(verdict) };
      }
    }
    if (this.mode() === 'none') return { principal: LOOPBACK_PRINCIPAL };
    // Another scheme (Basic, Token) is answered as no credential (RFC 6750 section 3.1: an
    // unsupported method gets the bare challenge), but its row says a credential was sent.
    const authorization = req.headers.authorization;
    if (authorization !== undefined && authorization.trim() !== '') {
      return { refusal: { rule: 'auth:unsupported-scheme', reason: unsupportedSchemeReason(authorization) } };
    }
    return {
      refusal: {
        rule: 'auth:missing',
        // Not written as a header line ('Authorization: Bearer <…>'): the audit log's redaction would take it for one.
        reason: 'a credential is required: an API key or token, sent as a Bearer token in the Authorization header or in X-API-Key',
      },
    };
  }
}
