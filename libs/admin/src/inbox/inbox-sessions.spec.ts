import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { INBOX_COOKIE, InboxSessions, MAX_REFUSALS, MAX_SESSIONS, MAX_SESSIONS_PER_PRINCIPAL, REFUSAL_KEPT_MS } from './inbox-sessions.js';

const withCookie = (id: string) => ({ headers: { cookie: `${INBOX_COOKIE}=${id}` } }) as IncomingMessage;

describe('InboxSessions: bounds', () => {
  it(`forgets a principal's own oldest session past ${MAX_SESSIONS_PER_PRINCIPAL}, and nobody else's`, () => {
    const sessions = new InboxSessions();
    const alice = sessions.create('sbk_alice', 'alice');
    const bob = Array.from({ length: MAX_SESSIONS_PER_PRINCIPAL }, () => sessions.create('sbk_bob', 'bob'));
    expect(sessions.size).toBe(MAX_SESSIONS_PER_PRINCIPAL + 1);

    const newest = sessions.create('sbk_bob', 'bob');
    expect(sessions.tokenOf(withCookie(bob[0]))).toBeUndefined();
    expect(sessions.tokenOf(withCookie(bob[1]))?.token).toBe('sbk_bob');
    expect(sessions.tokenOf(withCookie(newest))?.token).toBe('sbk_bob');
    expect(sessions.tokenOf(withCookie(alice))).toEqual({ id: alice, token: 'sbk_alice' });
    expect(sessions.size).toBe(MAX_SESSIONS_PER_PRINCIPAL + 1);
  });

  it('does not let one principal signing in again and again sign anyone else out', () => {
    const sessions = new InboxSessions();
    const admin = sessions.create('sbk_root', 'root');
    for (let i = 0; i < MAX_SESSIONS + 1; i++) sessions.create('sbk_bob', 'bob');
    expect(sessions.tokenOf(withCookie(admin))?.token).toBe('sbk_root');
    expect(sessions.size).toBe(MAX_SESSIONS_PER_PRINCIPAL + 1);
  });

  it('past the global bound, forgets the oldest session of whoever holds the most', () => {
    const sessions = new InboxSessions();
    const small = sessions.create('sbk_small', 'small');
    let first: string | undefined;
    for (let p = 0; sessions.size < MAX_SESSIONS; p++) {
      for (let i = 0; i < MAX_SESSIONS_PER_PRINCIPAL && sessions.size < MAX_SESSIONS; i++) {
        const id = sessions.create(`sbk_${p}`, `user-${p}`);
        first ??= id;
      }
    }
    sessions.create('sbk_new', 'newcomer');
    expect(sessions.size).toBe(MAX_SESSIONS);
    expect(sessions.tokenOf(withCookie(first!))).toBeUndefined();
    expect(sessions.tokenOf(withCookie(small))?.token).toBe('sbk_small');
  });
});

describe('InboxSessions: sessions ended for a refused credential', () => {
  const revoked = { rule: 'auth:revoked-key', reason: "API key 'alice' was revoked" } as const;
  afterEach(() => vi.useRealTimers());

  it('tells why a session was ended for a refusal, and nothing for one signed out or pushed out', () => {
    const sessions = new InboxSessions();
    const refused = sessions.create('sbk_alice', 'alice');
    const signedOut = sessions.create('sbk_alice', 'alice');
    sessions.end(refused, revoked);
    sessions.end(signedOut);
    expect(sessions.has(refused)).toBe(false);
    expect(sessions.refusalOf(refused)).toEqual(revoked);
    expect(sessions.refusalOf(signedOut)).toBeUndefined();
    // Ending it again (a second tab meeting the same refusal) changes nothing.
    sessions.end(refused);
    expect(sessions.refusalOf(refused)).toEqual(revoked);
  });

  it(`forgets the refusal after ${REFUSAL_KEPT_MS} ms`, () => {
    vi.useFakeTimers();
    const sessions = new InboxSessions();
    const id = sessions.create('sbk_alice', 'alice');
    sessions.end(id, revoked);
    vi.advanceTimersByTime(REFUSAL_KEPT_MS - 1);
    expect(sessions.refusalOf(id)).toEqual(revoked);
    vi.advanceTimersByTime(1);
    expect(sessions.refusalOf(id)).toBeUndefined();
  });

  it(`remembers at most ${MAX_REFUSALS} refusals, forgetting the oldest`, () => {
    const sessions = new InboxSessions();
    const ids = Array.from({ length: MAX_REFUSALS + 1 }, (_, i) => {
      const id = sessions.create(`sbk_${i}`, `user-${i}`);
      sessions.end(id, revoked);
      return id;
    });
    expect(sessions.refusalOf(ids[0]!)).toBeUndefined();
    expect(sessions.refusalOf(ids[1]!)).toEqual(revoked);
    expect(sessions.refusalOf(ids.at(-1)!)).toEqual(revoked);
  });
});
