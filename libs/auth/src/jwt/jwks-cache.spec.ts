import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as jose from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fetchFailureMessage, fetchRecoveryMessage, JwksCache, JwksUnavailableError, type JwksFetchFailure } from './jwks-cache.js';

/** A real JWKS endpoint whose answer each test sets, counting the fetches. */
describe('JwksCache', () => {
  let server: Server;
  let url: URL;
  let jwk: jose.JWK;
  let answer: { status: number; body: string; location?: string; chunked?: boolean; stall?: 'before-headers' | 'mid-body' };
  let fetches = 0;
  let clock = 0;
  let failures: string[];
  let failed: JwksFetchFailure[];
  let recoveries: number[];

  const cache = () =>
    new JwksCache(url, jose, {
      cooldownMs: 30_000,
      maxAgeMs: 600_000,
      timeoutMs: 2_000,
      maxBackoffMs: 30_000,
      now: () => clock,
      onFetchFailed: (failure) => {
        failures.push(failure.reason);
        failed.push(failure);
      },
      onFetchRecovered: ({ failedAttempts }) => recoveries.push(failedAttempts),
    });
  const header = (kid = 'a'): jose.JWSHeaderParameters => ({ alg: 'ES256', kid });
  const token = { payload: '', signature: '' } as jose.FlattenedJWSInput;
  const serve = (keys: jose.JWK[]) => (answer = { status: 200, body: JSON.stringify({ keys }) });

  beforeAll(async () => {
    const pair = await jose.generateKeyPair('ES256');
    jwk = { ...(await jose.exportJWK(pair.publicKey)), kid: 'a', alg: 'ES256' };
    server = createServer((_req, res) => {
      fetches += 1;
      if (answer.stall === 'before-headers') return;
      if (answer.stall === 'mid-body') {
        // A byte of white space now and then, forever: each read succeeds, the body never ends.
        res.writeHead(200, { 'Content-Type': 'application/json' }).write('{"keys":[');
        const drip = setInterval(() => res.write(' '), 100);
        return void res.on('close', () => clearInterval(drip));
      }
      res.writeHead(answer.status, { 'Content-Type': 'application/json', ...(answer.location ? { Location: answer.location } : {}) });
      if (!answer.chunked) return void res.end(answer.body);
      // No Content-Length: the size shows only while it is read.
      for (let at = 0; at < answer.body.length; at += 65536) res.write(answer.body.slice(at, at + 65536));
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`);
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    fetches = 0;
    clock = 1_000_000;
    failures = [];
    failed = [];
    recoveries = [];
    serve([jwk]);
  });

  it('a key id the cached keys lack, while the issuer fails, cannot be judged: unavailable (503), not a bad token (401)', async () => {
    const keys = cache();
    await keys.resolve(header(), token);
    answer = { status: 503, body: '' };
    clock += 600_000; // past maxAge: the refresh fails, the cached keys serve on
    await keys.resolve(header(), token);
    expect(failed).toHaveLength(1);
    // The issuer may have rotated to this key while it is down: the token may be good.
    clock += 30_000;
    const unknown = await keys.resolve(header('rotated'), token).catch((err: unknown) => err);
    expect(unknown).toBeInstanceOf(JwksUnavailableError);
    expect((unknown as JwksUnavailableError).retryAfterMs).toBeGreaterThan(0);
    // Once the issuer answers again without that key id, the token is refused as bad.
    serve([jwk]);
    clock += 30_000;
    await expect(keys.resolve(header('rotated'), token)).rejects.toBeInstanceOf(jose.errors.JWKSNoMatchingKey);
    // Within the cooldown after that successful fetch it is a bad token too.
    clock += 1_000;
    await expect(keys.resolve(header('other'), token)).rejects.toBeInstanceOf(jose.errors.JWKSNoMatchingKey);
  });

  it('says whether keys are cached when a fetch fails, when it will ask again, and once when it works again', async () => {
    const keys = cache();
    answer = { status: 500, body: 'oops' };
    await expect(keys.resolve(header(), token)).rejects.toBeInstanceOf(JwksUnavailableError);
    expect(failed).toEqual([{ reason: 'the issuer answered HTTP 500', keysCached: false, retryInMs: 1_000 }]);
    serve([jwk]);
    clock += 1_000;
    await keys.resolve(header(), token);
    expect(recoveries).toEqual([1]);
    // A refresh that fails while keys are held: tokens they signed still serve.
    answer = { status: 503, body: '' };
    clock += 600_000;
    await expect(keys.resolve(header(), token)).resolves.toBeDefined();
    clock += 1_000;
    await keys.resolve(header(), token);
    expect(failed.slice(1)).toEqual([
      { reason: 'the issuer answered HTTP 503', keysCached: true, retryInMs: 1_000 },
      { reason: 'the issuer answered HTTP 503', keysCached: true, retryInMs: 2_000 },
    ]);
    serve([jwk]);
    clock += 2_000;
    await keys.resolve(header(), token);
    await keys.resolve(header(), token);
    // Once per recovery, not per fetch that works.
    expect(recoveries).toEqual([1, 2]);
  });

  it('tells a refused token how long until the issuer is asked again: the backoff left, up to maxBackoffMs', async () => {
    answer = { status: 500, body: 'oops' };
    const keys = cache();
    const retryAfter = async () => ((await keys.resolve(header(), token).catch((err: unknown) => err)) as JwksUnavailableError).retryAfterMs;
    expect(await retryAfter()).toBe(1_000);
    clock += 400;
    expect(await retryAfter()).toBe(600); // no fetch: what is left of the first backoff
    const waits = [];
    for (let i = 0; i < 7; i++) {
      clock += 30_000;
      waits.push(await retryAfter());
    }
    expect(waits).toEqual([2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it("words the log line by what callers get: refused with no keys yet, served by the cached keys' tokens otherwise", () => {
    expect(fetchFailureMessage({ reason: 'no answer in time', keysCached: false, retryInMs: 4_000 })).toBe(
      "the issuer's signing keys could not be fetched: no answer in time; JWT callers are refused (503) until they can be; the issuer is asked again by the first token after 4 s",
    );
    expect(fetchFailureMessage({ reason: 'the issuer answered HTTP 502', keysCached: true, retryInMs: 1_500 })).toBe(
      "the issuer's signing keys could not be refreshed: the issuer answered HTTP 502; tokens signed by the keys fetched before are still accepted, tokens with a key id those lack are answered 503 (it may be a new key); the issuer is asked again by the first token after 2 s",
    );
    expect(fetchRecoveryMessage({ failedAttempts: 1 })).toBe("the issuer's signing keys were fetched again, after 1 failed attempt");
    expect(fetchRecoveryMessage({ failedAttempts: 3 })).toMatch(/after 3 failed attempts$/);
  });

  it('asks a failing issuer again only after a backoff that doubles, not on every token', async () => {
    answer = { status: 500, body: 'oops' };
    const keys = cache();
    for (let i = 0; i < 20; i++) await expect(keys.resolve(header(), token)).rejects.toBeInstanceOf(JwksUnavailableError);
    expect(fetches).toBe(1);
    expect(failures).toEqual(['the issuer answered HTTP 500']);

    clock += 1_000; // first backoff: 1 s
    await expect(keys.resolve(header(), token)).rejects.toBeInstanceOf(JwksUnavailableError);
    expect(fetches).toBe(2);
    clock += 1_000; // the second is 2 s
    await expect(keys.resolve(header(), token)).rejects.toBeInstanceOf(JwksUnavailableError);
    expect(fetches).toBe(2);

    serve([jwk]);
    clock += 1_000;
    await expect(keys.resolve(header(), token)).resolves.toBeDefined();
    expect(fetches).toBe(3);
  });

  it('shares one fetch among concurrent tokens', async () => {
    const keys = cache();
    await Promise.all(Array.from({ length: 10 }, () => keys.resolve(header(), token)));
    expect(fetches).toBe(1);
  });

  it('keeps the keys it has when a refresh fails, and refreshes them when it works', async () => {
    const keys = cache();
    await keys.resolve(header(), token);
    answer = { status: 503, body: '' };
    clock += 600_000; // max age: a refresh is due
    await expect(keys.resolve(header(), token)).resolves.toBeDefined();
    expect(fetches).toBe(2);
    expect(failures).toEqual(['the issuer answered HTTP 503']);
    await keys.resolve(header(), token); // within the backoff: no fetch, the old keys serve
    expect(fetches).toBe(2);
  });

  it('fetches again for an unknown key id at most once per cooldown', async () => {
    const keys = cache();
    await keys.resolve(header(), token);
    clock += 30_000;
    for (let i = 0; i < 5; i++) await expect(keys.resolve(header(`random-${i}`), token)).rejects.toBeInstanceOf(jose.errors.JWKSNoMatchingKey);
    expect(fetches).toBe(2);
    // A rotation: the new key is found on the next allowed fetch.
    const rotated = { ...jwk, kid: 'b' };
    serve([jwk, rotated]);
    clock += 30_000;
    await expect(keys.resolve(header('b'), token)).resolves.toBeDefined();
    expect(fetches).toBe(3);
  });

  it('gives up after timeoutMs on an issuer that never answers, or whose answer never ends', async () => {
    for (const stall of ['before-headers', 'mid-body'] as const) {
      answer = { status: 200, body: '', stall };
      failures = [];
      await expect(cache().resolve(header(), token), stall).rejects.toBeInstanceOf(JwksUnavailableError);
      expect(failures).toEqual(['no answer in time']);
    }
  });

  it('refuses what is not a key set, and does not follow redirects', async () => {
    for (const [bad, reason] of [
      [{ status: 200, body: 'not json' }, 'the answer is not JSON'],
      [{ status: 200, body: '{"keys":7}' }, 'the answer has no "keys" array'],
      [{ status: 302, body: '', location: 'http://127.0.0.1:1/elsewhere' }, 'the issuer answered HTTP 302'],
      [{ status: 200, body: JSON.stringify({ keys: [], pad: 'x'.repeat(2 << 20) }) }, 'the answer is over 1048576 bytes'],
      [{ status: 200, body: JSON.stringify({ keys: [], pad: 'x'.repeat(2 << 20) }), chunked: true }, 'the answer is over 1048576 bytes'],
    ] as const) {
      answer = { ...bad };
      failures = [];
      await expect(cache().resolve(header(), token)).rejects.toBeInstanceOf(JwksUnavailableError);
      expect(failures).toEqual([reason]);
    }
  });
});
