import { Cancellation } from '@switchboard/core';
import { describe, expect, it, vi } from 'vitest';
import { errorOf, flush, setup, slowUpstream } from '../test-support/subscription-setup.js';

describe('notifications/resources/updated', () => {
  it('reaches the sessions subscribed to an ancestor of the updated URI, under the URI they would know it by', async () => {
    const t = setup();
    const dir = t.session('dir');
    const gateway = t.session('gateway');
    const file = t.session('file');
    await t.subscriptions.subscribe(dir, t.connection, 'file:///srv/docs', 'file:///srv/docs');
    // A colliding URI the gateway rewrote: the upstream's URI follows its prefix verbatim.
    await t.subscriptions.subscribe(gateway, t.connection, 'file:///srv/docs/', 'switchboard://fx/file:///srv/docs/');
    await t.subscriptions.subscribe(file, t.connection, 'file:///srv/docs/a/readme.md', 'file:///srv/docs/a/readme.md');
    // ...and to the ancestor too: it hears the update once, by its most specific subscription.
    await t.subscriptions.subscribe(file, t.connection, 'file:///srv/docs', 'file:///srv/docs');

    t.updated('file:///srv/docs/a/readme.md');
    expect(t.heard).toEqual({
      dir: ['file:///srv/docs/a/readme.md'],
      gateway: ['switchboard://fx/file:///srv/docs/a/readme.md'],
      file: ['file:///srv/docs/a/readme.md'],
    });
  });

  it('does not take a prefix that ends inside a path segment for an ancestor', async () => {
    const t = setup();
    const s = t.session('s');
    await t.subscriptions.subscribe(s, t.connection, 'file:///srv/doc', 'file:///srv/doc');
    t.updated('file:///srv/docs/readme.md');
    t.updated('file:///srv');
    expect(t.heard.s).toEqual([]);
    t.updated('file:///srv/doc');
    expect(t.heard.s).toEqual(['file:///srv/doc']);
  });
});

describe('a subscribe the upstream is slow to answer', () => {
  const uri = 'file:///srv/a';

  it('times out as forwarded requests do: -32001 naming the timeout, cancelled upstream, and ended there', async () => {
    const up = slowUpstream({ requestMs: 20, maxRequestMs: 1_000 });
    const { t } = up;
    const err = await errorOf(t.subscriptions.subscribe(t.session('s'), up.connection, uri, uri, new Cancellation()));
    expect(err).toMatchObject({ code: -32001, message: 'Request timed out: no response within 20 ms' });
    expect(up.cancelled()).toEqual([up.requests('resources/subscribe')[0]!.id]);
    // It may have subscribed before it saw the cancel.
    expect(up.requests('resources/unsubscribe').map((r) => r.params)).toEqual([{ uri }]);
    expect(t.subscriptions.upstreamCount).toBe(0);
  });

  it("answers its host's cancel at once, and is ended upstream only after the upstream's answer; delivers nothing", async () => {
    const up = slowUpstream();
    const { t } = up;
    const s = t.session('s');
    const host = new Cancellation();
    const pending = errorOf(t.subscriptions.subscribe(s, up.connection, uri, uri, host));
    host.abort();
    expect(await pending).toMatchObject({ code: -32001, message: 'Request cancelled' });
    // Not cancelled upstream, and no unsubscribe the upstream could take before the subscribe.
    await flush();
    expect(up.cancelled()).toEqual([]);
    expect(up.requests('resources/unsubscribe')).toEqual([]);
    up.answerSubscribe(0);
    await flush();
    expect(up.requests('resources/unsubscribe').map((r) => r.params)).toEqual([{ uri }]);
    expect(t.subscriptions.upstreamCount).toBe(0);
    t.updated(uri);
    expect(t.heard.s).toEqual([]);
  });

  it('held for no session whose session ended before the answer: ended upstream', async () => {
    const up = slowUpstream();
    const { t } = up;
    const s = t.session('s');
    // Without its signal aborting: the session's end alone says nobody wants it.
    const pending = errorOf(t.subscriptions.subscribe(s, up.connection, uri, uri, new Cancellation()));
    t.sessions.remove('s');
    expect(await pending).toMatchObject({ code: -32001 });
    await flush();
    expect(up.requests('resources/unsubscribe')).toEqual([]);
    up.answerSubscribe(0);
    await flush();
    expect(up.requests('resources/unsubscribe').map((r) => r.params)).toEqual([{ uri }]);
    expect(t.subscriptions.upstreamCount).toBe(0);
  });

  it("one host's cancel leaves alone the subscription another host's subscribe in flight is getting", async () => {
    const up = slowUpstream();
    const { t } = up;
    const [a, b] = [t.session('a'), t.session('b')];
    const quitter = new Cancellation();
    const quit = errorOf(t.subscriptions.subscribe(a, up.connection, uri, uri, quitter));
    const held = t.subscriptions.subscribe(b, up.connection, uri, uri, new Cancellation());
    quitter.abort();
    await quit;
    // One subscribe upstream for both, not cancelled by the one who left.
    expect(up.requests('resources/subscribe')).toHaveLength(1);
    expect(up.cancelled()).toEqual([]);
    up.answerSubscribe(0);
    await held;
    expect(up.requests('resources/unsubscribe')).toEqual([]);
    t.updated(uri);
    expect(t.heard).toEqual({ a: [], b: [uri] });
  });

  it('a subscription released while another host is getting it is not ended upstream', async () => {
    const up = slowUpstream();
    const { t } = up;
    const [a, b] = [t.session('a'), t.session('b')];
    const first = t.subscriptions.subscribe(a, up.connection, uri, uri);
    const second = t.subscriptions.subscribe(b, up.connection, uri, uri);
    up.answerSubscribe(0);
    await Promise.all([first, second]);
    await t.subscriptions.unsubscribe(a, 'fx', uri);
    expect(up.requests('resources/subscribe')).toHaveLength(1);
    expect(up.requests('resources/unsubscribe')).toEqual([]);
    t.updated(uri);
    expect(t.heard).toEqual({ a: [], b: [uri] });
  });

  it('a subscribe after the last unsubscribe is sent upstream only once the unsubscribe is answered', async () => {
    const up = slowUpstream();
    const { t } = up;
    const [a, b] = [t.session('a'), t.session('b')];
    const first = t.subscriptions.subscribe(a, up.connection, uri, uri);
    up.answerSubscribe(0);
    await first;
    const released = t.subscriptions.unsubscribe(a, 'fx', uri);
    const second = t.subscriptions.subscribe(b, up.connection, uri, uri);
    await flush();
    expect(up.requests('resources/unsubscribe')).toHaveLength(1);
    expect(up.requests('resources/subscribe')).toHaveLength(1);
    up.answerUnsubscribe(0);
    await released;
    await flush();
    expect(up.requests('resources/subscribe')).toHaveLength(2);
    up.answerSubscribe(1);
    await second;
    t.updated(uri);
    expect(t.heard).toEqual({ a: [], b: [uri] });
    expect(t.subscriptions.upstreamCount).toBe(1);
  });

  it('is renewed on a reconnected connection, once: a refused renewal is not retried in a loop', async () => {
    const up = slowUpstream();
    const { t } = up;
    const s = t.session('s');
    const pending = t.subscriptions.subscribe(s, up.connection, uri, uri);
    up.answerSubscribe(0);
    await pending;
    t.subscriptions.ownedConnectionReady('fx', 'alice');
    expect(up.requests('resources/subscribe')).toHaveLength(2);
    up.peer.handle({ jsonrpc: '2.0', id: up.requests('resources/subscribe')[1]!.id, error: { code: -32603, message: 'busy' } });
    await flush();
    expect(up.requests('resources/subscribe')).toHaveLength(2);
    expect(up.requests('resources/unsubscribe')).toEqual([]);
    // The next reconnect tries again; the host still holds it.
    t.subscriptions.ownedConnectionReady('fx', 'alice');
    up.answerSubscribe(2);
    await flush();
    t.updated(uri);
    expect(t.heard.s).toEqual([uri]);
  });

  it('refused by the upstream: nothing to end there', async () => {
    const up = slowUpstream();
    const { t } = up;
    const pending = errorOf(t.subscriptions.subscribe(t.session('s'), up.connection, uri, uri, new Cancellation()));
    up.peer.handle({ jsonrpc: '2.0', id: up.requests('resources/subscribe')[0]!.id, error: { code: -32002, message: 'Resource not found' } });
    expect(await pending).toMatchObject({ code: -32002 });
    expect(up.requests('resources/unsubscribe')).toEqual([]);
  });

  it("the last session's end unsubscribes with the request timeouts: a hung upstream keeps nothing pending", async () => {
    const up = slowUpstream({ requestMs: 20, maxRequestMs: 1_000 });
    const { t } = up;
    const pending = t.subscriptions.subscribe(t.session('s'), up.connection, uri, uri);
    up.answerSubscribe(0);
    await pending;
    t.sessions.remove('s');
    expect(up.requests('resources/unsubscribe').map((r) => r.params)).toEqual([{ uri }]);
    await vi.waitFor(() => expect(up.cancelled()).toEqual([up.requests('resources/unsubscribe')[0]!.id]));
    expect(up.peer.pendingCount).toBe(0);
  });
});

describe('an update of a URI no host holds (the upstream holds a subscription the gateway does not)', () => {
  const uri = 'file:///srv/a';

  it('is unsubscribed from upstream, once per URI however many updates come, and reaches nobody', async () => {
    const up = slowUpstream();
    const { t } = up;
    t.session('s');
    t.updated(uri);
    t.updated(uri);
    await flush();
    expect(up.requests('resources/unsubscribe').map((r) => r.params)).toEqual([{ uri }]);
    up.answerUnsubscribe(0);
    await flush();
    t.updated(uri);
    t.updated('file:///srv/b');
    await flush();
    expect(up.requests('resources/unsubscribe').map((r) => r.params)).toEqual([{ uri }, { uri: 'file:///srv/b' }]);
    expect(t.heard.s).toEqual([]);
    expect(t.subscriptions.upstreamCount).toBe(0);
  });

  it("a host's subscribe meanwhile is sent only after the unsubscribe's answer, and holds the subscription", async () => {
    const up = slowUpstream();
    const { t } = up;
    const s = t.session('s');
    t.updated(uri);
    const held = t.subscriptions.subscribe(s, up.connection, uri, uri);
    await flush();
    expect(up.requests('resources/subscribe')).toEqual([]);
    up.answerUnsubscribe(0);
    await flush();
    expect(up.requests('resources/subscribe')).toHaveLength(1);
    up.answerSubscribe(0);
    await held;
    t.updated(uri);
    expect(t.heard.s).toEqual([uri]);
    expect(up.requests('resources/unsubscribe')).toHaveLength(1);
  });

  it('of a URI under one whose subscribe timed out ends that subscription: the URI subscribed to is unsubscribed from', async () => {
    const up = slowUpstream({ requestMs: 20, maxRequestMs: 1_000 });
    const { t } = up;
    const dir = 'file:///srv/';
    expect(await errorOf(t.subscriptions.subscribe(t.session('s'), up.connection, dir, dir))).toMatchObject({ code: -32001 });
    up.answerUnsubscribe(0);
    await flush();
    // The upstream carried the subscribe out after that unsubscribe: its updates are of what is under it.
    t.updated('file:///srv/a');
    t.updated('file:///srv/b');
    await flush();
    expect(up.requests('resources/unsubscribe').map((r) => r.params)).toEqual([{ uri: dir }, { uri: dir }]);
    expect(t.heard.s).toEqual([]);
  });

  it('is not unsubscribed from while a subscribe of it is in flight, nor when it is under a held URI', async () => {
    const up = slowUpstream();
    const { t } = up;
    const s = t.session('s');
    const pending = t.subscriptions.subscribe(s, up.connection, uri, uri);
    t.updated(uri);
    up.answerSubscribe(0);
    await pending;
    const dir = t.subscriptions.subscribe(s, up.connection, 'file:///srv/', 'file:///srv/');
    up.answerSubscribe(1);
    await dir;
    t.updated('file:///srv/c');
    await flush();
    expect(up.requests('resources/unsubscribe')).toEqual([]);
    // The update before the answer reached nobody yet: the host held nothing then.
    expect(t.heard.s).toEqual(['file:///srv/c']);
  });
});
