import type { IncomingMessage } from 'node:http';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import type { ApiKeyVerifier, KeyVerdict } from '../api-keys/api-key-verifier.js';
import { LOOPBACK_PRINCIPAL, type AuthPrincipal } from '../principal.js';
import { runStrategy, type PassportStrategy } from './strategy-runner.js';

export type AuthMode = 'none' | 'required';

/** Why a request was not authenticated: the audit row's rule, and what the caller is told. */
export interface AuthRefusal {
  rule: 'auth:missing' | 'auth:unknown-key' | 'auth:expired-key' | 'auth:revoked-key' | 'auth:error';
  reason: string;
}

export type HttpAuthResult = { principal: AuthPrincipal; refusal?: undefined } | { refusal: AuthRefusal; principal?: undefined };

/**
 * Establishes who sent an HTTP request, with passport strategies: an API key as
 * `Authorization: Bearer <key>` or as `X-API-Key: <key>`. A credential that is presented
 * must be valid, whatever the mode. Without one, `auth.mode: none` (loopback only) lets the
 * request through as the anonymous loopback principal and `required` refuses it.
 */
export class HttpAuthenticator {
  private readonly verdicts = new WeakMap<IncomingMessage, KeyVerdict>();
  private readonly strategies: PassportStrategy[];

  constructor(
    private readonly verifier: ApiKeyVerifier,
    private readonly mode: () => AuthMode,
  ) {
    type Done = (err: unknown, user?: unknown) => void;
    const verify = (req: IncomingMessage, key: string, done: Done) => {
      let verdict: KeyVerdict;
      try {
        verdict = this.verifier.verify(key);
      } catch (err) {
        // The database could not be read: fail closed (rule auth:error), never open.
        return done(err);
      }
      this.verdicts.set(req, verdict);
      done(null, verdict.ok ? verdict.principal : false);
    };
    this.strategies = [
      new BearerStrategy({ passReqToCallback: true }, verify as never),
      // This strategy hands the request last: (key, done, req).
      new HeaderAPIKeyStrategy({ header: 'X-API-Key', prefix: '' }, true, ((key: string, done: Done, req: IncomingMessage) =>
        verify(req, key, done)) as never),
    ];
  }

  authenticate(req: IncomingMessage): HttpAuthResult {
    // Most loopback requests carry neither header: no strategy needs to look.
    const presented = req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined;
    for (const strategy of presented ? this.strategies : []) {
      const outcome = runStrategy(strategy, req);
      if ('user' in outcome) return { principal: outcome.user as AuthPrincipal };
      if ('error' in outcome) return { refusal: { rule: 'auth:error', reason: 'the credential could not be checked' } };
      const verdict = this.verdicts.get(req);
      // The strategy found a credential and the key was refused: that is the answer.
      if (verdict && !verdict.ok) return { refusal: { rule: verdict.rule, reason: verdict.reason } };
    }
    if (this.mode() === 'none') return { principal: LOOPBACK_PRINCIPAL };
    return { refusal: { rule: 'auth:missing', reason: 'a credential is required (Authorization: Bearer <key>, or X-API-Key)' } };
  }
}
