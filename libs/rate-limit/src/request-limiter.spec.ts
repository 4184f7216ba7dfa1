import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryBucketStore } from './bucket-store.js';
import { RequestLimiter, type Admission, type LimitedRequest, type RequestLimits } from './request-limiter.js';

const call = (principal: string, name = 'gh__search', server = 'gh'): LimitedRequest => ({ principal, server, method: 'tools/call', name });

function limiter(settings: RequestLimits) {
  let current = settings;
  const l = new RequestLimiter(() => current, new MemoryBucketStore());
  return { l, set: (next: RequestLimits) => (current = next) };
}

const refused = (a: Admission) => (a.ok ? undefined : a);

// Buckets are fixed windows on the clock: the fake one moves only when the test says.
beforeEach(() => vi.useFakeTimers({ now: new Date('2026-11-22T00:00:00Z') }));
afterEach(() => vi.useRealTimers());

describe('RequestLimiter', () => {
  it('no limits configured: everything passes', async () => {
    const { l } = limiter({});
    for (let i = 0; i < 100; i++) expect((await l.admit(call('a'))).ok).toBe(true);
  });

  it('per principal: the n+1st call in a window is refused with the time left, and the window refills', async () => {
    const { l } = limiter({ perPrincipal: { points: 3, durationSec: 60 } });
    for (let i = 0; i < 3; i++) expect((await l.admit(call('alice'))).ok).toBe(true);
    vi.advanceTimersByTime(20_000);
    const no = refused(await l.admit(call('alice')));
    expect(no).toMatchObject({ rule: 'limit:principal' });
    expect(no!.retryAfterMs).toBeGreaterThan(39_000);
    expect(no!.retryAfterMs).toBeLessThanOrEqual(40_000);
    expect((await l.admit(call('bob'))).ok).toBe(true); // another principal has its own bucket
    vi.advanceTimersByTime(40_001);
    expect((await l.admit(call('alice'))).ok).toBe(true);
  });

  it('per principal and tool: other tools and other principals are not affected', async () => {
    const { l } = limiter({ perPrincipalTool: { points: 1, durationSec: 10 } });
    expect((await l.admit(call('alice', 'gh__search'))).ok).toBe(true);
    expect(refused(await l.admit(call('alice', 'gh__search')))).toMatchObject({ rule: 'limit:principal-tool' });
    expect((await l.admit(call('alice', 'gh__create_issue'))).ok).toBe(true);
    expect((await l.admit(call('bob', 'gh__search'))).ok).toBe(true);
    // Not a tool call: the tool bucket does not apply.
    expect((await l.admit({ principal: 'alice', server: 'gh', method: 'resources/read', name: null })).ok).toBe(true);
  });

  it('per principal and upstream', async () => {
    const { l } = limiter({ perPrincipalServer: { points: 2, durationSec: 10 } });
    expect((await l.admit(call('a', 'gh__x', 'gh'))).ok).toBe(true);
    expect((await l.admit(call('a', 'gh__y', 'gh'))).ok).toBe(true);
    expect(refused(await l.admit(call('a', 'gh__z', 'gh')))).toMatchObject({ rule: 'limit:principal-server' });
    expect((await l.admit(call('a', 'fs__read', 'fs'))).ok).toBe(true);
  });

  it('a request refused by a later bucket gives its points back to the earlier ones', async () => {
    const { l } = limiter({ perPrincipal: { points: 2, durationSec: 60 }, perPrincipalTool: { points: 1, durationSec: 60 } });
    expect((await l.admit(call('a', 't1'))).ok).toBe(true);
    expect(refused(await l.admit(call('a', 't1')))).toMatchObject({ rule: 'limit:principal-tool' });
    // The refused call did not use up the principal's second point.
    expect((await l.admit(call('a', 't2'))).ok).toBe(true);
    expect(refused(await l.admit(call('a', 't3')))).toMatchObject({ rule: 'limit:principal' });
  });

  it('upstream concurrency: calls in flight across principals, released when they end', async () => {
    const { l } = limiter({ upstreamConcurrency: 2 });
    const first = await l.admit(call('a'));
    const second = await l.admit(call('b'));
    const third = refused(await l.admit(call('c')));
    expect(third).toMatchObject({ rule: 'limit:upstream-concurrency', retryAfterMs: 250 });
    expect((await l.admit(call('c', 'fs__read', 'fs'))).ok).toBe(true); // another upstream
    if (first.ok) first.release();
    if (first.ok) first.release(); // twice is once
    expect((await l.admit(call('c'))).ok).toBe(true);
    expect((await l.admit(call('d'))).ok).toBe(false);
    if (second.ok) second.release();
  });

  it("per-principal concurrency: one caller's calls in flight to an upstream, so it cannot take every slot", async () => {
    const { l } = limiter({ upstreamConcurrency: 3, perPrincipalConcurrency: 2 });
    const [a1, a2] = [await l.admit(call('a')), await l.admit(call('a'))];
    const a3 = refused(await l.admit(call('a')));
    expect(a3).toMatchObject({ rule: 'limit:principal-concurrency', retryAfterMs: 250, reason: "you already have 2 calls in flight to upstream 'gh'" });
    // The refused call took no upstream slot: another caller gets the third.
    const b = await l.admit(call('b'));
    expect(b.ok).toBe(true);
    expect(refused(await l.admit(call('c')))).toMatchObject({ rule: 'limit:upstream-concurrency' });
    expect((await l.admit(call('a', 'fs__read', 'fs'))).ok).toBe(true); // another upstream counts apart
    if (a1.ok) a1.release();
    if (a1.ok) a1.release(); // twice is once
    expect((await l.admit(call('a'))).ok).toBe(true);
    expect(refused(await l.admit(call('a')))).toMatchObject({ rule: 'limit:principal-concurrency' });
    for (const admitted of [a2, b]) if (admitted.ok) admitted.release();
  });

  it('per-principal concurrency refused: the buckets before it get their points back', async () => {
    const { l } = limiter({ perPrincipal: { points: 2, durationSec: 60 }, perPrincipalConcurrency: 1 });
    const first = await l.admit(call('a'));
    expect(refused(await l.admit(call('a')))).toMatchObject({ rule: 'limit:principal-concurrency', reason: "you already have 1 call in flight to upstream 'gh'" });
    if (first.ok) first.release();
    expect((await l.admit(call('a'))).ok).toBe(true); // the refused call spent none of the 2 points
  });

  it('names the limit in its reason, in the singular for one call', async () => {
    const { l } = limiter({ perPrincipalTool: { points: 1, durationSec: 60 }, perPrincipal: { points: 2, durationSec: 30 } });
    expect((await l.admit(call('a'))).ok).toBe(true);
    expect(refused(await l.admit(call('a')))?.reason).toBe("limit of 1 call per principal of tool 'gh__search' per 1 minute reached");
    expect((await l.admit(call('a', 'gh__other'))).ok).toBe(true);
    expect(refused(await l.admit(call('a', 'gh__third')))?.reason).toBe('limit of 2 calls per principal per 30 seconds reached');
  });

  it('names a long window in the unit it was meant in, not as thousands of seconds', async () => {
    const { l } = limiter({ perPrincipal: { points: 1, durationSec: 86_400 } });
    expect((await l.admit(call('a'))).ok).toBe(true);
    expect(refused(await l.admit(call('a')))?.reason).toBe('limit of 1 call per principal per 1 day reached');
    const { l: other } = limiter({ perPrincipalServer: { points: 1, durationSec: 5400 } });
    expect((await other.admit(call('b'))).ok).toBe(true);
    expect(refused(await other.admit(call('b', 'gh__other')))?.reason).toBe("limit of 1 call per principal to upstream 'gh' per 90 minutes reached");
  });

  it('a changed limit applies to the next request (counting afresh)', async () => {
    const { l, set } = limiter({ perPrincipal: { points: 1, durationSec: 60 } });
    expect((await l.admit(call('a'))).ok).toBe(true);
    expect((await l.admit(call('a'))).ok).toBe(false);
    set({ perPrincipal: { points: 5, durationSec: 60 } });
    expect((await l.admit(call('a'))).ok).toBe(true);
    set({});
    for (let i = 0; i < 10; i++) expect((await l.admit(call('a'))).ok).toBe(true);
  });
});

describe('RequestLimiter.enabled', () => {
  it('is false until some limit is configured', () => {
    expect(limiter({}).l.enabled()).toBe(false);
    expect(limiter({ upstreamConcurrency: 4 }).l.enabled()).toBe(true);
    expect(limiter({ perPrincipalConcurrency: 4 }).l.enabled()).toBe(true);
    expect(limiter({ perPrincipalTool: { points: 1, durationSec: 1 } }).l.enabled()).toBe(true);
  });
});
