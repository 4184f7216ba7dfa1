import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** A token bucket's answer: taken, or refused with how long until a point is back. */
export type Take = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * Where bucket counts live: the port a Redis store will implement for several replicas (a
 * later issue). `take` removes one point from `key` in a bucket of `points` per `durationSec`;
 * `giveBack` returns one (when a later bucket of the same request refused it).
 */
export interface BucketStore {
  take(bucket: BucketSpec, key: string): Promise<Take>;
  giveBack(bucket: BucketSpec, key: string): Promise<void>;
}

export interface BucketSpec {
  /** Names the bucket kind; buckets of different kinds never share counts. */
  name: string;
  points: number;
  durationSec: number;
}

/**
 * In this process's memory, with rate-limiter-flexible's fixed windows: the default, and
 * right for one daemon. A bucket whose size changes (a config reload) starts counting afresh.
 */
export class MemoryBucketStore implements BucketStore {
  private readonly limiters = new Map<string, RateLimiterMemory>();

  async take(bucket: BucketSpec, key: string): Promise<Take> {
    try {
      await this.limiterFor(bucket).consume(key, 1);
      return { ok: true };
    } catch (refusal) {
      if (refusal instanceof RateLimiterRes) return { ok: false, retryAfterMs: Math.max(1, refusal.msBeforeNext) };
      throw refusal;
    }
  }

  async giveBack(bucket: BucketSpec, key: string): Promise<void> {
    await this.limiterFor(bucket).reward(key, 1);
  }

  private limiterFor(bucket: BucketSpec): RateLimiterMemory {
    const id = `${bucket.name}:${bucket.points}/${bucket.durationSec}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      for (const existing of this.limiters.keys()) if (existing.startsWith(`${bucket.name}:`)) this.limiters.delete(existing);
      limiter = new RateLimiterMemory({ keyPrefix: bucket.name, points: bucket.points, duration: bucket.durationSec });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }
}
