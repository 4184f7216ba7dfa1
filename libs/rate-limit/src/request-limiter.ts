import type { RateLimitsConfig } from '@switchboard/config';
import { counted, durationWords } from '@switchboard/core';
import type { BucketSpec, BucketStore } from './bucket-store.js';

/** One recorded request, as the limits see it. */
export interface LimitedRequest {
  principal: string;
  /** The upstream the catalog routed it to. */
  server: string;
  method: string;
  /** The public name: the tool of a tools/call. */
  name: string | null;
}

export type LimitRule =
  | 'limit:principal'
  | 'limit:principal-server'
  | 'limit:principal-tool'
  | 'limit:principal-concurrency'
  | 'limit:upstream-concurrency';

export type Admission =
  | { ok: true; release(): void }
  | { ok: false; rule: LimitRule; retryAfterMs: number; reason: string };

/** What a refusal for a full upstream suggests: calls end in milliseconds to seconds. */
const CONCURRENCY_RETRY_MS = 250;

/**
 * The rate-limit gate (libs/relay/src/gates/rate-limited.ts runs it): token buckets per principal, per
 * principal and upstream, per principal and tool, and caps on calls in flight: per
 * upstream across all principals, and per principal and upstream. Each bucket is optional (`rateLimits` in the config);
 * the settings in force are read at every request, so a reload applies to the next one.
 */
/** The limits on requests (the session limit is the Streamable HTTP front's). */
export type RequestLimits = Omit<RateLimitsConfig, 'sessionsPerPrincipal'>;

export class RequestLimiter {
  /** Calls in flight, per upstream and per caller and upstream (callerOnServer). */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly settings: () => RequestLimits,
    private readonly store: BucketStore,
  ) {}

  /** False when no limit is configured: the gate then costs nothing on the hot path. */
  enabled(): boolean {
    const limits = this.settings();
    return (
      limits.perPrincipal !== undefined ||
      limits.perPrincipalServer !== undefined ||
      limits.perPrincipalTool !== undefined ||
      limits.upstreamConcurrency !== undefined ||
      limits.perPrincipalConcurrency !== undefined
    );
  }

  async admit(request: LimitedRequest): Promise<Admission> {
    const limits = this.settings();
    const buckets: [LimitRule, BucketSpec | undefined, string, string][] = [
      ['limit:principal', spec('principal', limits.perPrincipal), request.principal, 'per principal'],
      ['limit:principal-server', spec('principal-server', limits.perPrincipalServer), `${request.principal}\n${request.server}`, `per principal to upstream '${request.server}'`],
      [
        'limit:principal-tool',
        request.method === 'tools/call' && request.name !== null ? spec('principal-tool', limits.perPrincipalTool) : undefined,
        `${request.principal}\n${request.name}`,
        `per principal of tool '${request.name}'`,
      ],
    ];
    const taken: [BucketSpec, string][] = [];
    for (const [rule, bucket, key, what] of buckets) {
      if (!bucket) continue;
      const take = await this.store.take(bucket, key);
      if (!take.ok) {
        // This request is refused: the points earlier buckets gave it go back.
        await Promise.all(taken.map(([b, k]) => this.store.giveBack(b, k)));
        return { ok: false, rule, retryAfterMs: take.retryAfterMs, reason: `limit of ${counted(bucket.points, 'call')} ${what} per ${durationWords(bucket.durationSec * 1000)} reached` };
      }
      taken.push([bucket, key]);
    }
    const refusal = this.overCap(request, limits);
    if (refusal) {
      await Promise.all(taken.map(([b, k]) => this.store.giveBack(b, k)));
      return refusal;
    }
    const counters = [request.server, callerOnServer(request)];
    for (const counter of counters) this.inFlight.set(counter, (this.inFlight.get(counter) ?? 0) + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        for (const counter of counters) {
          const now = (this.inFlight.get(counter) ?? 1) - 1;
          if (now > 0) this.inFlight.set(counter, now);
          else this.inFlight.delete(counter);
        }
      },
    };
  }

  /**
   * The caller's own cap first: when it is what refuses, the caller learns that the calls
   * holding the slots are its own.
   */
  private overCap(request: LimitedRequest, limits: RequestLimits): Admission | undefined {
    const own = limits.perPrincipalConcurrency;
    if (own !== undefined && (this.inFlight.get(callerOnServer(request)) ?? 0) >= own) {
      return {
        ok: false,
        rule: 'limit:principal-concurrency',
        retryAfterMs: CONCURRENCY_RETRY_MS,
        reason: `you already have ${counted(own, 'call')} in flight to upstream '${request.server}'`,
      };
    }
    const cap = limits.upstreamConcurrency;
    if (cap !== undefined && (this.inFlight.get(request.server) ?? 0) >= cap) {
      return {
        ok: false,
        rule: 'limit:upstream-concurrency',
        retryAfterMs: CONCURRENCY_RETRY_MS,
        reason: `upstream '${request.server}' already has ${counted(cap, 'call')} in flight`,
      };
    }
    return undefined;
  }
}

/** The in-flight counter of one caller's calls to one upstream (a server's own is its name: no name holds a newline). */
const callerOnServer = (request: LimitedRequest) => `${request.principal}\n${request.server}`;

function spec(name: string, bucket: { points: number; durationSec: number } | undefined): BucketSpec | undefined {
  return bucket && { name, ...bucket };
}
