import type { JwtConfig } from '@switchboard/config';
import { durationText, MAX_PRINCIPAL_CHARS } from '@switchboard/core';
import type { CryptoKey, JWTVerifyOptions, JWTVerifyResult } from 'jose';

type Jose = typeof import('jose');
/** Loaded with the first token: ~10 MiB a daemon without auth.jwt need not carry. */
let jose: Promise<Jose> | undefined;
const loadJose = () => (jose ??= import('jose'));
import type { AuthPrincipal } from '../principal.js';
import { claimAt } from './claim-path.js';
import { JwksCache, JwksUnavailableError, type JwksFetchFailure, type JwksFetchRecovery } from './jwks-cache.js';
import { tokenTypeProblem } from './token-type.js';

/**
 * Whose token a refused request carried, when the issuer's signature and this gateway's
 * issuer, audience and type checks all held and only its time did not (expired, not yet
 * valid, too long-lived, issued in the future): the audit row is then that principal's, as
 * RefusedKeyHolder does for a revoked key. Never taken from a token that failed any other
 * check: anyone can write any claim into one. For the row only: it admits nobody.
 */
export interface RefusedTokenHolder {
  id: string;
  authMethod: 'jwt';
}

export type TokenVerdict =
  | { ok: true; principal: AuthPrincipal }
  | {
      ok: false;
      rule: 'auth:invalid-token' | 'auth:expired-token' | 'auth:error';
      reason: string;
      /** What the client is told, where `reason` (the audit row's) names a setting of this gateway's; else `reason`. */
      told?: string;
      attributedTo?: RefusedTokenHolder;
      /** For auth:error while the issuer's keys cannot be had: seconds until it is asked again (Retry-After). */
      retryAfterSec?: number;
    };

type Refused = Extract<TokenVerdict, { ok: false }>;

/** How long an unknown key id waits before the JWKS is fetched again. */
const JWKS_COOLDOWN_MS = 30_000;
/** Keys are refetched after this long even when every kid is known, so rotations land. */
const JWKS_MAX_AGE_MS = 10 * 60_000;
const JWKS_TIMEOUT_MS = 5_000;
/** While the issuer fails, it is asked again after 1 s, 2 s, 4 s ... and then every 30 s. */
const JWKS_MAX_BACKOFF_MS = 30_000;
/**
 * A token without a key id matches every key of its type: during a rotation the issuer
 * publishes two or three. Each is tried in turn, but no more than this many, so one made-up
 * token cannot cost a signature check per key of a large key set.
 */
const MAX_CANDIDATE_KEYS = 4;

/**
 * What a principal name must not hold: control characters and the line and paragraph
 * separators (some terminals break lines at them), and format characters: the invisible ones
 * (zero-width space and joiners, soft hyphen, byte order mark) and the bidirectional
 * overrides and isolates, with which a name displays as another ("al\u200Bice", "\u202Eecila"
 * both show as alice in the audit log); nor start or end with white space ("alice ").
 */
const UNUSABLE_IN_NAME = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]|^\p{White_Space}|\p{White_Space}$/u;

export interface JwtVerifierHooks {
  /** A fetch of the issuer's keys failed (the daemon logs it, fetchFailureMessage; callers are told only auth:error). */
  onKeysUnavailable?: (failure: JwksFetchFailure) => void;
  /** A fetch worked again after failures (the daemon logs it, fetchRecoveryMessage). */
  onKeysRecovered?: (recovery: JwksFetchRecovery) => void;
  /**
   * What the operator needs to fix a refusal but the client must not be told (the setting,
   * the value it has): the daemon logs it at info. Only for tokens the issuer signed (jose
   * checks the signature before any claim), so a stranger cannot fill the log with them.
   */
  onOperatorNote?: (note: OperatorNote) => void;
}

/** A log line for the operator: its message, and its fields for a log shipper. */
export interface OperatorNote {
  message: string;
  fields: Record<string, unknown>;
}

/** The most of a claim's value an operator's log line shows: enough to recognise it. */
const SHOWN_CLAIM_CHARS = 200;

/** The settings a token's iss and aud are compared with, by claim. */
const ADDRESS_SETTINGS = { iss: 'issuer', aud: 'audience' } as const;

/**
 * Verifies JWT bearer tokens from one OIDC issuer with jose: the signature against the
 * issuer's JWKS (fetched on first use, cached, refetched for an unknown key id, so key
 * rotation needs no restart), then `iss`, `aud`, `exp` and `nbf`, and the `typ` header
 * (tokenTypeProblem: no other kind of JWT passes for an access token). Only the configured
 * asymmetric algorithms are accepted; an unsigned token (`alg: none`) never is.
 */
export class JwtVerifier {
  private keys: JwksCache | undefined;

  constructor(
    private readonly options: JwtConfig,
    private readonly hooks: JwtVerifierHooks = {},
  ) {}

  async verify(token: string): Promise<TokenVerdict> {
    const jose = await loadJose();
    const { errors } = jose;
    this.keys ??= new JwksCache(new URL(this.options.jwksUrl), jose, {
      cooldownMs: JWKS_COOLDOWN_MS,
      maxAgeMs: JWKS_MAX_AGE_MS,
      timeoutMs: JWKS_TIMEOUT_MS,
      maxBackoffMs: JWKS_MAX_BACKOFF_MS,
      onFetchFailed: this.hooks.onKeysUnavailable,
      onFetchRecovered: this.hooks.onKeysRecovered,
    });
    const checks: JWTVerifyOptions = {
      issuer: this.options.issuer,
      audience: this.options.audience,
      algorithms: this.options.algorithms,
      clockTolerance: this.options.clockToleranceSec,
      requiredClaims: ['exp'],
    };
    let verified: JWTVerifyResult;
    try {
      verified = await verifySigned(jose, this.keys, token, checks);
    } catch (err) {
      this.noteAddressMismatch(err, errors);
      const refusal = refusalOf(err, errors);
      if (isTimeFault(err, errors)) {
        const holder = await this.holderOutsideItsTime(jose, this.keys, token, checks);
        if (holder) return { ...refusal, attributedTo: holder };
      }
      return refusal;
    }
    const { payload } = verified;
    const id = this.principalOf(verified);
    if (typeof id !== 'string') return id;
    // Signed, addressed and typed as an access token of this gateway's: a refusal from here on
    // is for its time alone, and names whose it is (for the audit row).
    const attributedTo: RefusedTokenHolder = { id, authMethod: 'jwt' };
    // A token that lives for months is a bearer credential nothing can revoke before then (an
    // API key can be); the issuer's own lifetime is not taken on trust past the cap.
    const lifetime = Number(payload.exp) - Math.floor(Date.now() / 1000);
    if (lifetime > this.options.maxTokenLifetimeSec + this.options.clockToleranceSec) {
      // In the wording of every other duration (rounded up): "2 hours" for 2 h 59 min said
      // the token lived a third less than it does.
      const away = durationText(Math.max(0, Number(payload.exp) * 1000 - Date.now()));
      const limit = this.options.maxTokenLifetimeSec;
      // The setting's name is for the operator (the audit row, the log line), who can change
      // it; the client is told the limit only, as any client of this gateway may read it.
      this.hooks.onOperatorNote?.({
        message: `refused a token of ${id} for its lifetime: its "exp" claim is ${away} away, more than auth.jwt.maxTokenLifetimeSec (${limit} s) accepts; raise the setting, or shorten the issuer's token lifetime`,
        fields: { principal: id, setting: 'auth.jwt.maxTokenLifetimeSec', maxTokenLifetimeSec: limit },
      });
      return {
        ok: false,
        rule: 'auth:invalid-token',
        reason: `the token's "exp" claim is ${away} away: more than this gateway accepts (auth.jwt.maxTokenLifetimeSec: ${limit})`,
        told: `the token's "exp" claim is ${away} away: its lifetime is longer than this gateway accepts (at most ${limit} s)`,
        attributedTo,
      };
    }
    // jose checks exp and nbf; a token issued in the future is as wrong as one not yet valid.
    if (typeof payload.iat === 'number' && payload.iat - this.options.clockToleranceSec > Date.now() / 1000) {
      return { ok: false, rule: 'auth:invalid-token', reason: `the token's "iat" claim is in the future`, attributedTo };
    }
    return {
      ok: true,
      principal: {
        id,
        authMethod: 'jwt',
        roles: listClaim(claimAt(payload, this.options.claims.roles)),
        groups: listClaim(claimAt(payload, this.options.claims.groups)),
        // exp is a required claim: a session's streams end with the token, when verify
        // itself would refuse it (exp plus the clock tolerance), not earlier.
        credential: { expiresAt: (Number(payload.exp) + this.options.clockToleranceSec) * 1000 },
      },
    };
  }

  /**
   * A token the issuer signed for another audience or by another issuer name: the client is
   * told only which claim (it learns nothing of this gateway's settings), the operator what
   * the token carried, so that a Keycloak default `aud: account` or an issuer URL that differs
   * by a trailing slash is plain to see.
   */
  private noteAddressMismatch(err: unknown, errors: Jose['errors']): void {
    if (!this.hooks.onOperatorNote || !(err instanceof errors.JWTClaimValidationFailed) || err.reason !== 'check_failed') return;
    if (err.claim !== 'iss' && err.claim !== 'aud') return;
    const setting = `auth.jwt.${ADDRESS_SETTINGS[err.claim]}`;
    const carried = err.payload[err.claim];
    const text = typeof carried === 'string' ? carried : (JSON.stringify(carried) ?? String(carried));
    const cut = text.length > SHOWN_CLAIM_CHARS;
    const quoted = typeof carried === 'string';
    const value = escapedForLog(cut ? text.slice(0, SHOWN_CLAIM_CHARS) : text, quoted);
    const shown = quoted ? `"${value}${cut ? '...' : ''}"` : `${value}${cut ? '...' : ''}`;
    const expected = JSON.stringify(this.options[ADDRESS_SETTINGS[err.claim]]);
    this.hooks.onOperatorNote({
      message: `refused a token for its "${err.claim}" claim: it is ${shown}${cut ? ` (cut to ${SHOWN_CLAIM_CHARS} characters)` : ''}, and ${setting} is ${expected}`,
      fields: { claim: err.claim, value, setting },
    });
  }

  /** The principal a verified token names, or why it names none that can serve (its type, its principal claim). */
  private principalOf({ payload, protectedHeader }: JWTVerifyResult): string | Refused {
    const typeProblem = tokenTypeProblem(protectedHeader.typ, this.options.requireAtJwt);
    if (typeProblem !== undefined) return { ok: false, rule: 'auth:invalid-token', reason: typeProblem };
    const id = claimAt(payload, this.options.claims.principal);
    if (typeof id !== 'string' || id === '') {
      return { ok: false, rule: 'auth:invalid-token', reason: `the token has no '${this.options.claims.principal}' claim naming the principal` };
    }
    // The principal names audit rows, log lines, policy matches and per-user secrets: a
    // line break in it would forge lines in the CLI's output, an invisible character would
    // pass it off as another caller to whoever reads them, and its length is unbounded.
    if (id.length > MAX_PRINCIPAL_CHARS || UNUSABLE_IN_NAME.test(id)) {
      return {
        ok: false,
        rule: 'auth:invalid-token',
        reason: `the token's '${this.options.claims.principal}' claim is not a usable principal name (control or invisible characters, spaces around it, or over ${MAX_PRINCIPAL_CHARS} characters)`,
      };
    }
    return id;
  }

  /**
   * For a token jose refused for its time (exp, nbf): whose it is, if every other check holds.
   * It is verified again, in full, as of a moment it was (or will be) valid, so that the
   * signature, issuer, audience and type are checked by the same code as for any token, not
   * inferred from the order in which jose happens to check claims. Only a token the issuer
   * signed gets here (jose checks the signature before any claim), so an attacker cannot
   * make it run for made-up tokens. Undefined when any check fails, or the token was never valid.
   */
  private async holderOutsideItsTime(jose: Jose, keys: JwksCache, token: string, checks: JWTVerifyOptions): Promise<RefusedTokenHolder | undefined> {
    let moment: number | undefined;
    try {
      // Unverified, for the moment to check at only: what decides is the verification below.
      const { exp, nbf } = jose.decodeJwt(token);
      moment = typeof nbf === 'number' ? nbf : typeof exp === 'number' ? exp - 1 : undefined;
    } catch {
      return undefined;
    }
    if (moment === undefined || !Number.isFinite(moment)) return undefined;
    try {
      const verified = await verifySigned(jose, keys, token, { ...checks, currentDate: new Date(moment * 1000) });
      const named = this.principalOf(verified);
      return typeof named === 'string' ? { id: named, authMethod: 'jwt' } : undefined;
    } catch {
      return undefined;
    }
  }
}

/** jose's signature and claim checks, each key of several that match tried in turn (verifyWithEach). */
async function verifySigned(jose: Jose, keys: JwksCache, token: string, checks: JWTVerifyOptions): Promise<JWTVerifyResult> {
  try {
    return await jose.jwtVerify(token, keys.resolve, checks);
  } catch (err) {
    if (!(err instanceof jose.errors.JWKSMultipleMatchingKeys)) throw err;
    return verifyWithEach(jose, token, err, checks);
  }
}

/** Whether jose refused a token for its time alone: expired, or not yet valid. */
function isTimeFault(err: unknown, errors: Jose['errors']): boolean {
  if (err instanceof errors.JWTExpired) return err.claim === 'exp';
  return err instanceof errors.JWTClaimValidationFailed && err.claim === 'nbf' && err.reason === 'check_failed';
}

/**
 * jose leaves a key set's several matches to its caller: the error iterates over the keys.
 * The first whose signature holds decides (its claims are then checked as usual); when none
 * does, the signature is not valid.
 */
async function verifyWithEach(jose: Jose, token: string, matches: AsyncIterable<CryptoKey>, checks: JWTVerifyOptions): Promise<JWTVerifyResult> {
  let tried = 0;
  for await (const key of matches) {
    if (tried++ === MAX_CANDIDATE_KEYS) break;
    try {
      return await jose.jwtVerify(token, key, checks);
    } catch (err) {
      if (!(err instanceof jose.errors.JWSSignatureVerificationFailed)) throw err;
    }
  }
  throw new jose.errors.JWSSignatureVerificationFailed();
}

/** Roles and groups come as an array of strings or one space-separated string (OAuth's scope style). */
function listClaim(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  return [];
}

/**
 * A claim's text as a log line may hold it: control characters, line separators and
 * invisible or direction-changing format characters as \u escapes (and, in a value shown
 * between quotes, `"` and `\`, so that it ends where it seems to), as the principal check
 * guards the audit log.
 */
function escapedForLog(text: string, quoted: boolean): string {
  return text.replace(quoted ? /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}"\\]/gu : /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => {
    if (c === '"' || c === '\\') return `\\${c}`;
    if (c === '\n') return '\\n';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** jose's short reason codes for a refused claim, in words a person reads in a 401. */
const CLAIM_FAULTS: Record<string, string> = {
  check_failed: 'does not have the value this gateway expects',
  missing: 'is missing',
  invalid: 'is not valid',
  unexpected: 'is not accepted',
};

/** What jose said, as a rule and a reason a client may see (no key material, no stack). */
function refusalOf(err: unknown, errors: Jose['errors']): Refused {
  if (err instanceof errors.JWTExpired) return { ok: false, rule: 'auth:expired-token', reason: 'the token expired' };
  if (err instanceof errors.JWTClaimValidationFailed && err.claim === 'nbf' && err.reason === 'check_failed') {
    // Apart from the other time faults: a clock ahead at the issuer, or a token used before
    // its time, is told apart from an expired or malformed one.
    const ahead = typeof err.payload.nbf === 'number' ? ` (nbf: ${durationText(Math.max(0, err.payload.nbf * 1000 - Date.now()))} from now)` : '';
    return { ok: false, rule: 'auth:invalid-token', reason: `the token is not valid yet${ahead}` };
  }
  if (err instanceof errors.JWTClaimValidationFailed) {
    return { ok: false, rule: 'auth:invalid-token', reason: `the token's "${err.claim}" claim ${CLAIM_FAULTS[err.reason] ?? 'is not accepted'}` };
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return { ok: false, rule: 'auth:invalid-token', reason: 'the token is signed with an algorithm that is not accepted' };
  if (err instanceof errors.JWSSignatureVerificationFailed) return { ok: false, rule: 'auth:invalid-token', reason: 'the token signature is not valid' };
  if (err instanceof errors.JWKSNoMatchingKey) return { ok: false, rule: 'auth:invalid-token', reason: "no key of the issuer's JWKS matches the token" };
  if (err instanceof JwksUnavailableError) {
    // The next token after the backoff asks the issuer again: told to wait until then, a
    // client neither retries into the backoff nor waits longer than it must.
    return { ok: false, rule: 'auth:error', reason: "the issuer's signing keys could not be fetched", retryAfterSec: Math.max(1, Math.ceil(err.retryAfterMs / 1000)) };
  }
  if (err instanceof errors.JOSEError) return { ok: false, rule: 'auth:invalid-token', reason: 'the token is malformed or not a signed JWT' };
  return { ok: false, rule: 'auth:error', reason: 'the token could not be checked' };
}
