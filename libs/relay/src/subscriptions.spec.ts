import { Cancellation, JsonRpcPeer, type JsonRpcMessage, type JsonRpcRequest } from '@switchboard/core';
import { silentLogger } from '@switchboard/observability';
import { DefaultTransportFactory, UpstreamRegistry, type OwnedConnections, type UpstreamConnection } from '@switchboard/upstream';
import { describe, expect, it, vi } from 'vitest';
import { SessionDirectory, type DownstreamSession } from './session.js';
import { MAX_SUBSCRIPTIONS_PER_SESSION, SubscriptionManager } from './subscriptions.js';

type Item = Record<string, unknown>;

/** Sessions of one principal, each recording the resources/updated URIs it hears. */
function setup(upstream?: UpstreamConnection) {
  const sessions = new SessionDirectory();
  const heard: Record<string, string[]> = {};
  const registry = new UpstreamRegistry({ logger: silentLogger(), factory: new DefaultTransportFactory(), client: { name: 't', version: '1' } });
  // A principal's own connection (not the registry's): its subscriptions are owned by the principal.
  const connection = upstream ?? {
    name: 'fx',
    isAvailable: true,
    config: { timeouts: { requestMs: 60_000, maxRequestMs: 600_000 } },
    request: async () => ({}),
  } as unknown as UpstreamConnection;
  const pool = {
    ownerOf: (c: UpstreamConnection) => (c === connection ? 'alice' : undefined),
    existing: (server: string, owner: string) => (server === 'fx' && owner === 'alice' ? connection : undefined),
  } as unknown as OwnedConnections;
  const subscriptions = new SubscriptionManager(registry, sessions, silentLogger(), [pool]);
  const session = (id: string) => {
    heard[id] = [];
    const s = {
      id,
      initialized: true,
      principal: { id: 'alice', authMethod: 'api-key' }, // callerName: alice
      send: async (m: { params: Item }) => void heard[id].push(String(m.params.uri)),
    } as unknown as DownstreamSession;
    sessions.add(s);
    return s;
  };
  const updated = (uri: string) =>
    subscriptions.onNotification('fx', 'alice', { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
  return { subscriptions, connection, session, heard, updated, sessions };
}

/**
 * A principal's connection over a real JsonRpcPeer (its ids, timeouts and cancellation)
 * whose upstream answers only when told: what it was sent is in `sent`.
 */
function slowUpstream(timeouts = { requestMs: 60_000, maxRequestMs: 600_000 }) {
  const sent: JsonRpcMessage[] = [];
  const peer = new JsonRpcPeer(async (m) => void sent.push(m), { onRequest: async () => ({}), onNotification: () => undefined });
  const connection = {
    name: 'fx',
    isAvailable: true,
    config: { timeouts },
    request: (method: string, params: Item, options: object) => peer.request(method, params, options),
  } as unknown as UpstreamConnection;
  const requests = (method: string) => sent.filter((m): m is JsonRpcRequest => 'method' in m && m.method === method);
  const cancelled = () => sent.filter((m) => 'method' in m && m.method === 'notifications/cancelled').map((m) => (m as { params: Item }).params.requestId);
  /** The upstream answers its nth subscribe (from 0). */
  const answerSubscribe = (n: number) => peer.handle({ jsonrpc: '2.0', id: requests('resources/subscribe')[n]!.id, result: {} });
  /** The upstream answers its nth unsubscribe (from 0). */
  const answerUnsubscribe = (n: number) => peer.handle({ jsonrpc: '2.0', id: requests('resources/unsubscribe')[n]!.id, result: {} });
  return { t: setup(connection), connection, requests, cancelled, answerSubscribe, answerUnsubscribe, peer, sent };
}

const flush = () => new Promise((r) => setImmediate(r));
const errorOf = (p: Promise<unknown>) => p.then(() => undefined, (e: { code?: number; message?: string }) => e);

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
