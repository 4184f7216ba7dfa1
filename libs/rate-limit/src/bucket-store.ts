import type { RateLimiterMemory } from 'rate-limiter-flexible';

/**
 * Loaded on the first limited request, and only the memory limiter: the package's index
 * loads every store it supports (Redis, Mongo, Postgres, ...), ~11 MiB of an idle daemon.
 */
let memoryLimiter: Promise<typeof RateLimiterMemory> | undefined;
const loadMemoryLimiter = () =>
  (memoryLimiter ??= import('rate-limiter-flexible/lib/RateLimiterMemory.js').then(
    (m) => m.default,
  ));

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
    const limiter = await this.limiterFor(bucket);
    try {
      await limiter.consume(key, 1);
      return { ok: true };
    } catch (refusal) {
      // A refusal is a RateLimiterRes; anything else is a fault.
      const msBeforeNext = (refusal as { msBeforeNext?: unknown })?.msBeforeNext;
      if (typeof msBeforeNext === 'number') return { ok: false, retryAfterMs: Math.max(1, msBeforeNext) };
      throw refusal;
    }
  }

  async giveBack(bucket: BucketSpec, key: string): Promise<void> {
    await (await this.limiterFor(bucket)).reward(key, 1);
  }

  private async limiterFor(bucket: BucketSpec): Promise<RateLimiterMemory> {
    const id = `${bucket.name}:${bucket.points}/${bucket.durationSec}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      for (const existing of this.limiters.keys()) if (existing.startsWith(`${bucket.name}:`)) this.limiters.delete(existing);
      const Limiter = await loadMemoryLimiter();
      // Another request may have built it while this one waited for the module.
      const built = this.limiters.get(id);
      if (built) return built;
      limiter = new Limiter({ keyPrefix: bucket.name, points: bucket.points, duration: bucket.durationSec });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }
}
