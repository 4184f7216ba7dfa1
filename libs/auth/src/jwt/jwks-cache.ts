import type { CryptoKey, FlattenedJWSInput, JWSHeaderParameters, JSONWebKeySet } from 'jose';

type Jose = typeof import('jose');
type LocalKeySet = ReturnType<Jose['createLocalJWKSet']>;

export interface JwksCacheOptions {
  /** How long an unknown key id waits before the JWKS is fetched again. */
  cooldownMs: number;
  /** Keys are refetched after this long even when every kid is known, so rotations land. */
  maxAgeMs: number;
  /** One fetch gives up after this long. */
  timeoutMs: number;
  /** The longest wait between attempts while the issuer keeps failing. */
  maxBackoffMs: number;
  now?: () => number;
  /** Told once per failed attempt (so at most once a backoff), for the daemon's log. */
  onFetchFailed?: (failure: JwksFetchFailure) => void;
  /** Told once when a fetch works again after one or more failed: the log said they failed. */
  onFetchRecovered?: (recovery: JwksFetchRecovery) => void;
}

/** A failed fetch of the issuer's keys, and what it means for tokens until the next one. */
export interface JwksFetchFailure {
  /** Why, in words for the operator (never forwarded to a caller). */
  reason: string;
  /**
   * Whether keys fetched earlier are still held: then tokens they signed are still accepted,
   * and only a key id they lack is not; without any, every token is refused (auth:error).
   */
  keysCached: boolean;
  /** How long until the issuer may be asked again (the backoff): the next token after that asks. */
  retryInMs: number;
}

export interface JwksFetchRecovery {
  /** How many attempts in a row had failed. */
  failedAttempts: number;
}

/** The issuer's keys could not be had: the token cannot be judged, so it is refused (auth:error). */
export class JwksUnavailableError extends Error {
  constructor(
    message: string,
    /** How long until the issuer is asked again (the backoff left): what a caller is told to wait. */
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

/** A JWKS is a few keys; anything this large is not one. */
const MAX_JWKS_BYTES = 1 << 20;
const FIRST_BACKOFF_MS = 1_000;

/**
 * The issuer's signing keys, fetched here rather than by jose's remote key set, which asks
 * the issuer again on every token while the issuer fails (no key is cached, so every
 * request, even one with a made-up token, became a fetch). Here a failed fetch is retried
 * only after a backoff (1 s doubling to `maxBackoffMs`), concurrent callers share one
 * fetch, and keys that were fetched stay in use when a refresh fails: an issuer that is
 * down for a while does not sign everyone out, and its answers are never forwarded as a
 * reason to the caller.
 */
export class JwksCache {
  private keys: LocalKeySet | undefined;
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private failures = 0;
  private inFlight: Promise<void> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly url: URL,
    private readonly jose: Jose,
    private readonly options: JwksCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** A key resolver for jose's jwtVerify. */
  readonly resolve = async (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> => {
    if (!this.keys || this.now() - this.fetchedAt >= this.options.maxAgeMs) await this.refresh();
    if (!this.keys) throw new JwksUnavailableError("the issuer's signing keys could not be fetched", this.nextAttemptInMs());
    try {
      return await this.keys(header, token);
    } catch (err) {
      if (!(err instanceof this.jose.errors.JWKSNoMatchingKey)) throw err;
      // A key id we do not know may be a rotation: ask again, at most once a cooldown.
      if (this.now() - this.attemptedAt >= this.options.cooldownMs) await this.refresh();
      try {
        return await this.keys(header, token);
      } catch (again) {
        // While the issuer fails, the key id may be one it rotated to: the token cannot be
        // judged, and a host told invalid_token drops it and signs its user in again.
        if (again instanceof this.jose.errors.JWKSNoMatchingKey && this.failures > 0) {
          throw new JwksUnavailableError("the issuer's signing keys could not be refreshed, and the token's key id is not among those fetched before", this.nextAttemptInMs());
        }
        throw again;
      }
    }
  };

  private refresh(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    if (this.now() - this.attemptedAt < this.backoffMs()) return Promise.resolve();
    this.attemptedAt = this.now();
    this.inFlight = this.fetchKeys().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  /** How long until refresh() would fetch again: what is left of the backoff (0 when none). */
  private nextAttemptInMs(): number {
    return Math.max(0, this.attemptedAt + this.backoffMs() - this.now());
  }

  private backoffMs(): number {
    if (this.failures === 0) return 0;
    return Math.min(this.options.maxBackoffMs, FIRST_BACKOFF_MS * 2 ** (this.failures - 1));
  }

  private async fetchKeys(): Promise<void> {
    try {
      const keySet = await this.download();
      this.keys = this.jose.createLocalJWKSet(keySet);
      this.fetchedAt = this.now();
      const failedAttempts = this.failures;
      this.failures = 0;
      if (failedAttempts > 0) this.options.onFetchRecovered?.({ failedAttempts });
    } catch (err) {
      this.failures += 1;
      this.options.onFetchFailed?.({ reason: describeFailure(err), keysCached: this.keys !== undefined, retryInMs: this.nextAttemptInMs() });
    }
  }

  private async download(): Promise<JSONWebKeySet> {
    // No redirects: the configured URL is the one trusted for keys.
    const res = await fetch(this.url, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(this.options.timeoutMs) });
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`the issuer answered HTTP ${res.status}`);
    }
    const text = await boundedText(res, MAX_JWKS_BYTES);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error('the answer is not JSON');
    }
    const keys = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new Error('the answer has no "keys" array');
    return body as JSONWebKeySet;
  }
}

/** The body as text, read no further than `limit` bytes: an endless answer is cut off, not held. */
async function boundedText(res: Response, limit: number): Promise<string> {
  const tooLong = () => new Error(`the answer is over ${limit} bytes`);
  if (Number(res.headers.get('content-length') ?? 0) > limit) {
    await res.body?.cancel();
    throw tooLong();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of (res.body ?? []) as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw tooLong(); // leaving the loop cancels the stream
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeFailure(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'no answer in time';
  if (err instanceof TypeError) return `the issuer could not be reached (${(err.cause as Error | undefined)?.message ?? err.message})`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * The daemon's log line for a failed fetch. It says what callers get meanwhile, which depends
 * on whether keys were fetched before: it once said every JWT caller was refused while tokens
 * signed by the cached keys were being served.
 */
export function fetchFailureMessage({ reason, keysCached, retryInMs }: JwksFetchFailure): string {
  const retry = `the issuer is asked again by the first token after ${Math.max(1, Math.ceil(retryInMs / 1000))} s`;
  return keysCached
    ? `the issuer's signing keys could not be refreshed: ${reason}; tokens signed by the keys fetched before are still accepted, tokens with a key id those lack are answered 503 (it may be a new key); ${retry}`
    : `the issuer's signing keys could not be fetched: ${reason}; JWT callers are refused (503) until they can be; ${retry}`;
}

/** The daemon's log line once a fetch works again: the failures logged before are over. */
export function fetchRecoveryMessage({ failedAttempts }: JwksFetchRecovery): string {
  return `the issuer's signing keys were fetched again, after ${failedAttempts} failed attempt${failedAttempts === 1 ? '' : 's'}`;
}
