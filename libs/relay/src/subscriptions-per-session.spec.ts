import { Cancellation } from '@switchboard/core';
import { describe, expect, it, vi } from 'vitest';
import { errorOf, flush, setup, slowUpstream, type Item } from '../test-support/subscription-setup.js';
import { MAX_SUBSCRIPTIONS_PER_SESSION } from './subscriptions.js';

describe('subscriptions per session', () => {
  it('holds at most MAX_SUBSCRIPTIONS_PER_SESSION for one session: the next is refused with -31429 and sent nowhere', async () => {
    const t = setup();
    const request = vi.spyOn(t.connection, 'request');
    const s = t.session('s');
    const item = (i: number) => `fixture://items/${i}`;
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_SESSION; i++) await t.subscriptions.subscribe(s, t.connection, item(i), item(i));
    expect(t.subscriptions.heldBy('s')).toBe(MAX_SUBSCRIPTIONS_PER_SESSION);
    const sentBefore = request.mock.calls.length;

    const refused = await errorOf(t.subscriptions.subscribe(s, t.connection, item(-1), item(-1)));
    expect(refused).toMatchObject({ code: -31429, message: expect.stringMatching(/Too many subscriptions/) });
    expect(request.mock.calls.length).toBe(sentBefore);
    expect(t.subscriptions.heldBy('s')).toBe(MAX_SUBSCRIPTIONS_PER_SESSION);

    // One it holds may be asked for again; another session has its own; one let go makes room.
    await t.subscriptions.subscribe(s, t.connection, item(0), item(0));
    await t.subscriptions.subscribe(t.session('other'), t.connection, item(-1), item(-1));
    await t.subscriptions.unsubscribe(s, 'fx', item(1));
    await t.subscriptions.subscribe(s, t.connection, item(-1), item(-1));
    expect([t.subscriptions.heldBy('s'), t.subscriptions.heldBy('other')]).toEqual([MAX_SUBSCRIPTIONS_PER_SESSION, 1]);
  });

  it("a waiter whose host cancels stops counting against its session's bound", async () => {
    const up = slowUpstream();
    const { t } = up;
    const s = t.session('s');
    const held = t.subscriptions.subscribe(s, up.connection, 'file:///srv/a', 'file:///srv/a');
    up.answerSubscribe(0);
    await held;
    const host = new Cancellation();
    const waiting = errorOf(t.subscriptions.subscribe(s, up.connection, 'file:///srv/b', 'file:///srv/b', host));
    expect(t.subscriptions.heldBy('s')).toBe(2);
    host.abort();
    expect(await waiting).toMatchObject({ message: 'Request cancelled' });
    expect(t.subscriptions.heldBy('s')).toBe(1);
  });

  it('a session that ends while its subscribe is in flight leaves nothing indexed, and is not made a holder by a subscribe that comes after', async () => {
    const up = slowUpstream();
    const { t } = up;
    const uri = 'file:///srv/a';
    const pending = errorOf(t.subscriptions.subscribe(t.session('s'), up.connection, uri, uri));
    expect(t.subscriptions.indexedSessions).toBe(1);
    t.sessions.remove('s');
    expect(await pending).toMatchObject({ message: 'Request cancelled' });
    expect(t.subscriptions.indexedSessions).toBe(0);

    // Another session holds it; a subscribe of an ended session (the handler awaited its connection) arrives.
    const other = t.session('other');
    const held = t.subscriptions.subscribe(other, up.connection, uri, uri);
    up.answerSubscribe(0);
    await held;
    const late = t.session('late');
    t.sessions.remove('late');
    expect(await errorOf(t.subscriptions.subscribe(late, up.connection, uri, uri))).toMatchObject({ message: 'Request cancelled' });
    expect(t.subscriptions.indexedSessions).toBe(1);
    // Held for nobody once the other session lets go: ended upstream.
    const released = t.subscriptions.unsubscribe(other, 'fx', uri);
    await flush();
    up.answerUnsubscribe(0);
    await released;
    expect(t.subscriptions.upstreamCount).toBe(0);
  });

  it("unsubscribeByPublicUri and a session's end release that session's subscriptions only, among many sessions'", async () => {
    const t = setup();
    const request = vi.spyOn(t.connection, 'request');
    const unsubscribed = () => request.mock.calls.filter(([m]) => m === 'resources/unsubscribe').map(([, p]) => (p as Item).uri);
    const shared = 'file:///srv/shared';
    const own = (n: number) => `file:///srv/own/${n}`;
    const sessions = Array.from({ length: 50 }, (_, n) => t.session(`s${n}`));
    for (const [n, s] of sessions.entries()) {
      await t.subscriptions.subscribe(s, t.connection, shared, `switchboard://fx/${shared}`);
      await t.subscriptions.subscribe(s, t.connection, own(n), own(n));
    }
    expect(t.subscriptions.upstreamCount).toBe(51);

    // By a URI it did not subscribe with: nothing; by its own: that one only.
    expect(await t.subscriptions.unsubscribeByPublicUri(sessions[3]!, own(4))).toBe(false);
    expect(await t.subscriptions.unsubscribeByPublicUri(sessions[3]!, `switchboard://fx/${shared}`)).toBe(true);
    expect(await t.subscriptions.unsubscribeByPublicUri(sessions[3]!, own(3))).toBe(true);
    expect(unsubscribed()).toEqual([own(3)]);
    expect(t.subscriptions.heldBy('s3')).toBe(0);

    t.sessions.remove('s7');
    await flush();
    expect(unsubscribed()).toEqual([own(3), own(7)]);
    expect(t.subscriptions.indexedSessions).toBe(48);

    t.updated(shared);
    t.updated(own(4));
    t.updated(own(3));
    t.updated(own(7));
    expect(t.heard.s3).toEqual([]);
    expect(t.heard.s4).toEqual([`switchboard://fx/${shared}`, own(4)]);
    expect(sessions.filter((s) => t.heard[s.id]!.length > 0)).toHaveLength(48);
    expect(sessions.map((s) => t.subscriptions.heldBy(s.id)).filter((n) => n !== 2)).toEqual([0, 0]);
  });
});
