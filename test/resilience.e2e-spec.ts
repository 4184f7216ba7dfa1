import { join } from 'node:path';
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startConformanceHttpFixture, startHttpFixture, type HttpFixture } from '@switchboard/testing';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, isAlive, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig } from './support/daemon.js';
import { auditRows } from './support/audit-rows.js';
import { connectHost, type Host } from './support/hosts.js';
import { answerItem, pendingItem } from './support/inbox-client.js';
import { closeHosts, errorOf, host, hosts, stats } from './support/resilience.js';

/**
 * What happens when things go wrong upstream or the daemon is told to stop: errors instead
 * of hangs, recovery without help, timeouts that cancel upstream, a drain on SIGTERM and no
 * orphan processes even after SIGKILL. (Upstreams written here to break their side of the
 * wire: broken-upstreams.e2e-spec.ts.)
 */
const fixtures: HttpFixture[] = [];

afterEach(async () => {
  await closeHosts();
  await stopAllDaemons();
  await Promise.all(fixtures.splice(0).map((f) => f.stop()));
});

/**
 * Waits until the fixture behind `tool` has taken a call other than the stats polls made
 * here since it reported `before` calls: it counts every call, those polls included.
 */
async function untilAnotherCall(client: Client, before: number, tool = 'fx__stats'): Promise<void> {
  let polls = 0;
  await eventually(async () => (await stats(client, tool)).calls - before - ++polls >= 1, 15_000, 'the call to reach the fixture');
}

describe('an upstream that dies mid-call', () => {
  it('stdio: the caller gets -32000 at once and the upstream comes back by itself', async () => {
    const daemon = await startDaemon({ mcpServers: { fx: stdioFixture() } });
    const client = await host(daemon);
    const before = await stats(client);

    const err = await errorOf(client.callTool({ name: 'fx__crash', arguments: {} }, { timeout: 30_000 }));
    expect(err).toMatchObject({ code: -32000 });
    expect(err?.message).toMatch(/fx/);

    const after = await eventually(async () => {
      const s = await stats(client).catch(() => undefined);
      return s && s.pid !== before.pid ? s : undefined;
    }, 20_000, 'the upstream to be restarted');
    expect(isAlive(before.pid)).toBe(false);
    expect(after.calls).toBe(1);
  });

  it('Streamable HTTP: a killed server fails the pending call, and a new one on the same port is picked up', async () => {
    const first = await startHttpFixture('http');
    fixtures.push(first);
    const daemon = await startDaemon({ mcpServers: { fx: { type: 'http', url: first.url } } });
    const client = await host(daemon);
    await stats(client);

    const pending = errorOf(client.callTool({ name: 'fx__slow', arguments: { ms: 20_000 } }, { timeout: 60_000 }));
    await eventually(async () => (await request(daemon.baseUrl).get('/readyz')).body.upstreams[0].state === 'ready');
    process.kill(first.pid, 'SIGKILL');
    const err = await pending;
    expect(err?.code).toBeDefined();
    expect([-32000, -32010]).toContain(err!.code);

    const second = await startHttpFixture('http', { PORT: String(first.port) });
    fixtures.push(second);
    const s = await eventually(() => stats(client), 30_000, 'calls to succeed against the new server');
    expect(s.pid).toBe(second.pid);
  });
});

describe('a subscription ended while its upstream is down', () => {
  it('is ended at once, and does not come back with the upstream', async () => {
    const first = await startHttpFixture('http');
    fixtures.push(first);
    const daemon = await startDaemon({ mcpServers: { fx: { type: 'http', url: first.url } } });
    const h = await connectHost('streamable-http', { daemon });
    hosts.push(h);
    const hello = 'fixture://static/hello';
    await h.client.subscribeResource({ uri: hello });
    process.kill(first.pid, 'SIGKILL');
    await eventually(async () => (await request(daemon.baseUrl).get('/readyz')).body.upstreams[0].state !== 'ready', 30_000, 'the upstream seen down');
    await h.client.unsubscribeResource({ uri: hello });

    const second = await startHttpFixture('http', { PORT: String(first.port) });
    fixtures.push(second);
    await eventually(() => stats(h.client), 30_000, 'calls to succeed against the new server');
    // Not renewed upstream: touching the resource finds no subscriber there.
    const touched = await h.client.callTool({ name: 'fx__touch_resource', arguments: { uri: hello } });
    expect((touched.content as { text: string }[])[0].text).toBe(`not subscribed: ${hello}`);
  });
});

describe('resource subscriptions with a slow or hung upstream', () => {
  const hello = 'fixture://static/hello';
  const textOf = (r: unknown) => ((r as { content: { text: string }[] }).content)[0].text;
  /** Asks the upstream (through the gateway) whether it holds a subscription to hello. */
  const upstreamSubscribed = async (client: Client) =>
    textOf(await client.callTool({ name: 'fx__touch_resource', arguments: { uri: hello } })) === `updated ${hello}`;

  it('a subscribe past its timeout answers -32001, is cancelled upstream and leaves nothing subscribed', async () => {
    const daemon = await startDaemon({
      mcpServers: { fx: stdioFixture({ FIXTURE_SUBSCRIBE_DELAY_MS: '60000' }, { timeouts: { requestMs: 500 } }) },
    });
    const h = await connectHost('streamable-http', { daemon });
    hosts.push(h);
    const err = await errorOf(h.client.subscribeResource({ uri: hello }, { timeout: 20_000 }));
    expect(err).toMatchObject({ code: -32001, message: expect.stringContaining('no response within 500 ms') });
    await eventually(async () => (await stats(h.client)).cancelled === 1, 10_000, 'the upstream to see the cancellation');
    // It took effect upstream before the cancel reached it: the gateway ends it there.
    await eventually(async () => !(await upstreamSubscribed(h.client)), 10_000, 'the upstream subscription to end');
    expect(h.notifications.get('notifications/resources/updated') ?? []).toEqual([]);
  });

  it('a subscribe its host cancelled is ended upstream once the upstream answers it, and delivers nothing to the host', async () => {
    const daemon = await startDaemon({ mcpServers: { fx: stdioFixture({ FIXTURE_SUBSCRIBE_DELAY_MS: '3000' }) } });
    const h = await connectHost('streamable-http', { daemon });
    hosts.push(h);
    const abort = new AbortController();
    const pending = errorOf(h.client.subscribeResource({ uri: hello }, { signal: abort.signal }));
    // Cancelled once the upstream has subscribed and has yet to answer.
    await eventually(() => upstreamSubscribed(h.client), 10_000, 'the upstream to subscribe');
    abort.abort('changed my mind');
    await pending;
    // Not cancelled upstream: its answer tells the gateway when an unsubscribe can follow it.
    await eventually(async () => !(await upstreamSubscribed(h.client)), 10_000, 'the upstream subscription to end');
    expect((await stats(h.client)).cancelled).toBe(0);
    expect(h.notifications.get('notifications/resources/updated') ?? []).toEqual([]);
  });

  it('a subscribe whose session ends before the upstream answers leaves no upstream subscription', async () => {
    const daemon = await startDaemon({ mcpServers: { fx: stdioFixture({ FIXTURE_SUBSCRIBE_DELAY_MS: '3000' }) } });
    const [leaving, staying] = [await connectHost('streamable-http', { daemon }), await connectHost('streamable-http', { daemon })];
    hosts.push(leaving, staying);
    const pending = errorOf(leaving.client.subscribeResource({ uri: hello }));
    await eventually(() => upstreamSubscribed(staying.client), 10_000, 'the upstream to subscribe');
    await (leaving.client.transport as StreamableHTTPClientTransport).terminateSession();
    await leaving.close();
    await pending;
    await eventually(async () => !(await upstreamSubscribed(staying.client)), 10_000, 'the upstream subscription to end');
  });

  it('of two hosts subscribing at once, the one that cancels holds nothing and the other keeps the subscription', async () => {
    const daemon = await startDaemon({ mcpServers: { fx: stdioFixture({ FIXTURE_SUBSCRIBE_DELAY_MS: '3000' }) } });
    const [holder, quitter] = [await connectHost('streamable-http', { daemon }), await connectHost('streamable-http', { daemon })];
    hosts.push(holder, quitter);
    const held = holder.client.subscribeResource({ uri: hello });
    const abort = new AbortController();
    const quit = errorOf(quitter.client.subscribeResource({ uri: hello }, { signal: abort.signal }));
    await eventually(() => upstreamSubscribed(holder.client), 10_000, 'the upstream to subscribe');
    abort.abort('changed my mind');
    await quit;
    await held;
    // One subscribe upstream served both hosts, and the one who left did not cancel it.
    expect(await stats(holder.client)).toMatchObject({ cancelled: 0, subscribeRequests: 1 });
    holder.notifications.delete('notifications/resources/updated');
    expect(await upstreamSubscribed(holder.client)).toBe(true);
    await eventually(() => holder.notifications.get('notifications/resources/updated')?.length, 10_000, 'the holder to hear');
    expect(quitter.notifications.get('notifications/resources/updated') ?? []).toEqual([]);
  });

  it('a session that ends while its upstream does not answer unsubscribe is not kept waiting for it', async () => {
    const daemon = await startDaemon({
      mcpServers: { fx: stdioFixture({ FIXTURE_UNSUBSCRIBE_DELAY_MS: '60000' }, { timeouts: { requestMs: 500 } }) },
    });
    const [leaving, staying] = [await connectHost('streamable-http', { daemon }), await connectHost('streamable-http', { daemon })];
    hosts.push(leaving, staying);
    await leaving.client.subscribeResource({ uri: hello });
    await (leaving.client.transport as StreamableHTTPClientTransport).terminateSession();
    await leaving.close();
    // The upstream got the unsubscribe, and the gateway gave up on its answer (cancelled it).
    await eventually(async () => !(await upstreamSubscribed(staying.client)), 10_000, 'the upstream to get the unsubscribe');
    await eventually(async () => (await stats(staying.client)).cancelled === 1, 10_000, 'the unsubscribe to be cancelled at its timeout');
  });
});

describe('resource subscriptions on an upstream that takes them in its own order', () => {
  const hello = 'fixture://static/hello';
  interface SubscriptionStats {
    subscriptions: string[];
    subscribeRequests: number;
    unsubscribeRequests: number;
    subscribes: number;
    unsubscribes: number;
  }
  const upstream = async (client: Client, tool?: string) => (await stats(client, tool)) as unknown as SubscriptionStats;

  it("a subscribe that takes effect upstream after its session's end is ended there after it", async () => {
    // The upstream subscribes only when it answers, 3 s on, and does not stop for a cancel.
    const daemon = await startDaemon({
      mcpServers: { fx: stdioFixture({ FIXTURE_SUBSCRIPTION_EFFECT: 'answer', FIXTURE_SUBSCRIBE_DELAY_MS: '3000' }) },
    });
    const [leaving, staying] = [await connectHost('streamable-http', { daemon }), await connectHost('streamable-http', { daemon })];
    hosts.push(leaving, staying);
    const pending = errorOf(leaving.client.subscribeResource({ uri: hello }));
    await eventually(async () => (await upstream(staying.client)).subscribeRequests === 1, 10_000, 'the subscribe upstream');
    await (leaving.client.transport as StreamableHTTPClientTransport).terminateSession();
    await leaving.close();
    await pending;
    await eventually(async () => (await upstream(staying.client)).subscribes === 1, 15_000, 'the subscribe to take effect');
    await eventually(async () => (await upstream(staying.client)).subscriptions.length === 0, 15_000, 'the upstream subscription to end');
  });

  /**
   * A host whose subscribe of hello the upstream carried out late: it subscribes only when it
   * answers, 3 s on, long after the gateway gave up at 500 ms, cancelled it and sent the
   * unsubscribe (which took effect at once).
   */
  async function lateSubscription(): Promise<Host> {
    const daemon = await startDaemon({
      mcpServers: {
        fx: stdioFixture({ FIXTURE_SUBSCRIPTION_EFFECT: 'answer', FIXTURE_SUBSCRIBE_DELAY_MS: '3000' }, { timeouts: { requestMs: 500 } }),
      },
    });
    const h = await connectHost('streamable-http', { daemon });
    hosts.push(h);
    expect(await errorOf(h.client.subscribeResource({ uri: hello }, { timeout: 20_000 }))).toMatchObject({ code: -32001 });
    await eventually(async () => (await upstream(h.client)).subscribes === 1, 15_000, 'the late subscribe to take effect');
    return h;
  }

  it('a subscribe that timed out and takes effect after the unsubscribe that followed it is ended at the first update it brings', async () => {
    const h = await lateSubscription();
    // The leak: the upstream holds a subscription no host has.
    expect(await upstream(h.client)).toMatchObject({ subscriptions: [hello], unsubscribeRequests: 1, unsubscribes: 1 });
    await h.client.callTool({ name: 'fx__touch_resource', arguments: { uri: hello } });
    await eventually(async () => (await upstream(h.client)).subscriptions.length === 0, 15_000, 'the stray subscription to be ended');
    expect(await upstream(h.client)).toMatchObject({ unsubscribeRequests: 2 });
    expect(h.notifications.get('notifications/resources/updated') ?? []).toEqual([]);
  });

  it('a late subscribe whose updates are of URIs under the one subscribed to is ended by unsubscribing that one', async () => {
    const h = await lateSubscription();
    // A spec-legal update of a sub-resource of the URI subscribed to.
    await h.client.callTool({ name: 'fx__touch_resource', arguments: { uri: `${hello}/part`, force: true } });
    await eventually(async () => (await upstream(h.client)).unsubscribeRequests === 2, 15_000, 'the stray unsubscribe');
    expect(await upstream(h.client)).toMatchObject({ subscriptions: [], unsubscribes: 2 });
    expect(h.notifications.get('notifications/resources/updated') ?? []).toEqual([]);
  });

  it("an upstream flooding the gateway with updates of URIs no host holds does not use up another upstream's stray unsubscribes", async () => {
    const daemon = await startDaemon({ mcpServers: { flood: stdioFixture(), fx: stdioFixture() } });
    const h = await connectHost('streamable-http', { daemon });
    hosts.push(h);
    // Past the per-connection limit of 256 a minute: the 44 over it get no unsubscribe.
    await h.client.callTool({ name: 'flood__touch_resource', arguments: { uri: 'flood://r/', force: true, count: 300 } }, { timeout: 60_000 });
    await eventually(async () => (await upstream(h.client, 'flood__stats')).unsubscribeRequests === 256, 30_000, "the flood's unsubscribes");
    await h.client.callTool({ name: 'fx__touch_resource', arguments: { uri: hello, force: true } });
    await eventually(async () => (await upstream(h.client)).unsubscribeRequests === 1, 15_000, "the other upstream's stray unsubscribe");
    expect(await upstream(h.client, 'flood__stats')).toMatchObject({ unsubscribeRequests: 256 });
  });

  it('Streamable HTTP: a subscribe right after the last unsubscribe leaves the upstream subscribed and the host hearing updates', async () => {
    // The upstream ends a subscription only when it answers the unsubscribe, 2 s on: a
    // subscribe sent meanwhile (another POST) takes effect before it.
    const fixture = await startHttpFixture('http', { FIXTURE_SUBSCRIPTION_EFFECT: 'answer', FIXTURE_UNSUBSCRIBE_DELAY_MS: '2000' });
    fixtures.push(fixture);
    const daemon = await startDaemon({ mcpServers: { fx: { type: 'http', url: fixture.url } } });
    const [first, second] = [await connectHost('streamable-http', { daemon }), await connectHost('streamable-http', { daemon })];
    hosts.push(first, second);
    await first.client.subscribeResource({ uri: hello });
    const unsubscribed = first.client.unsubscribeResource({ uri: hello });
    await eventually(async () => (await upstream(second.client)).unsubscribeRequests === 1, 10_000, 'the unsubscribe upstream');
    await second.client.subscribeResource({ uri: hello });
    await unsubscribed;
    await eventually(async () => (await upstream(second.client)).unsubscribes === 1, 15_000, 'the unsubscribe to take effect');
    expect((await upstream(second.client)).subscriptions).toEqual([hello]);
    second.notifications.delete('notifications/resources/updated');
    await second.client.callTool({ name: 'fx__touch_resource', arguments: { uri: hello } });
    await eventually(() => second.notifications.get('notifications/resources/updated')?.length, 10_000, 'the update at the subscriber');
    expect(first.notifications.get('notifications/resources/updated') ?? []).toEqual([]);
  });
});

describe('an upstream that has just reconnected', () => {
  it('a call made before its tools are read again waits for that read and reaches it, rather than hear that a ready upstream is not available', async () => {
    // Its tools/list takes 3 s: for that long after it is ready again, the catalog lacks its tools.
    const daemon = await startDaemon({ mcpServers: { fx: stdioFixture({ FIXTURE_TOOLS_LIST_DELAY_MS: '3000' }) } });
    const client = await host(daemon);
    expect(await errorOf(client.callTool({ name: 'fx__crash', arguments: {} }, { timeout: 30_000 }))).toMatchObject({ code: -32000 });
    const stateOf = async () => ((await request(daemon.baseUrl).get('/readyz')).body as { upstreams: { state: string }[] }).upstreams[0].state;
    await eventually(async () => (await stateOf()) === 'ready', 20_000, 'the upstream to be ready again');
    // In the window: ready, its tools not read yet.
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('fx__echo');
    const result = await client.callTool({ name: 'fx__echo', arguments: { text: 'back' } }, { timeout: 30_000 });
    expect(result.isError).toBeFalsy();
    expect((result.content as { text: string }[])[0].text).toBe('back');
  });
});

describe('a Streamable HTTP upstream that closes its stream mid-call', () => {
  it('the gateway resumes it with Last-Event-ID and the answer still arrives', async () => {
    const upstream = await startConformanceHttpFixture();
    fixtures.push(upstream);
    const daemon = await startDaemon({ namespace: 'none', mcpServers: { conf: { type: 'http', url: upstream.url } } });
    const client = await host(daemon);
    const result = await client.callTool({ name: 'test_reconnection', arguments: {} }, { timeout: 30_000 });
    expect(result.isError).toBeFalsy();
    // The fixture says which path it took: only a resumable stream gets closed.
    expect((result.content as { text: string }[])[0].text).toMatch(/stream was closed mid-call/);
  });
});

describe('timeouts', () => {
  it('a request past its timeout answers -32001 and is cancelled upstream', async () => {
    const daemon = await startDaemon({ mcpServers: { fx: stdioFixture({}, { timeouts: { requestMs: 400 } }) } });
    const client = await host(daemon);
    const err = await errorOf(client.callTool({ name: 'fx__slow', arguments: { ms: 5_000 } }, { timeout: 30_000 }));
    expect(err).toMatchObject({ code: -32001 });
    await eventually(async () => (await stats(client)).cancelled === 1, 10_000, 'the upstream to see the cancellation');
  });

  it('progress resets the idle timeout', async () => {
    const daemon = await startDaemon({ mcpServers: { fx: stdioFixture({}, { timeouts: { requestMs: 1_000 } }) } });
    const client = await host(daemon);
    let progress = 0;
    const result = await client.callTool(
      { name: 'fx__slow', arguments: { ms: 2_500, steps: 25 } },
      { timeout: 30_000, onprogress: () => progress++ },
    );
    expect(result.isError).toBeFalsy();
    expect(progress).toBeGreaterThan(0);
  });

  it('the hard maximum applies whatever progress arrives', async () => {
    const daemon = await startDaemon({
      mcpServers: { fx: stdioFixture({}, { timeouts: { requestMs: 1_000, maxRequestMs: 1_500 } }) },
    });
    const client = await host(daemon);
    const err = await errorOf(
      client.callTool({ name: 'fx__slow', arguments: { ms: 6_000, steps: 60 } }, { timeout: 30_000, onprogress: () => undefined }),
    );
    expect(err).toMatchObject({ code: -32001 });
    expect(err?.message).toMatch(/maximum/);
  });

  // Over stdio no question of the upstream's names the call it is about: one host's must
  // not hold another host's call open (the generous maxRequestMs is what that would reach).
  it("an upstream's pings during one host's call leave another host's call its idle timeout", async () => {
    const daemon = await startDaemon({ mcpServers: { fx: stdioFixture({}, { timeouts: { requestMs: 1_000, maxRequestMs: 6_000 } }) } });
    const [a, b] = [await host(daemon), await host(daemon)];
    // Its progress keeps a's own call going; its pings are about no call, not even a's.
    let pinged = 0;
    const stop = new AbortController();
    const pinging = errorOf(
      a.callTool(
        { name: 'fx__ping_client', arguments: { count: 50, everyMs: 200 } },
        { timeout: 30_000, onprogress: () => pinged++, signal: stop.signal },
      ),
    );
    await eventually(async () => pinged > 0, 10_000, "a's call to be pinging");
    const err = await errorOf(b.callTool({ name: 'fx__slow', arguments: { ms: 15_000 } }, { timeout: 30_000 }));
    expect(err).toMatchObject({ code: -32001, message: expect.stringContaining('no response within 1000 ms') });
    stop.abort();
    await pinging;
  });

  it('an elicitation waiting in the inbox holds the idle timeout of the call that asked it, not of another host\'s', async () => {
    const daemon = await startDaemon({ mcpServers: { fx: stdioFixture({}, { timeouts: { requestMs: 1_000, maxRequestMs: 8_000 } }) } });
    // Neither host declares elicitation: the question waits in the inbox for a person.
    const [a, b] = [await host(daemon), await host(daemon)];
    const asking = a.callTool({ name: 'fx__ask_elicitation', arguments: { message: 'Who?' } }, { timeout: 30_000 });
    const item = await pendingItem(daemon, (i) => i.kind === 'elicitation');
    const err = await errorOf(b.callTool({ name: 'fx__slow', arguments: { ms: 15_000 } }, { timeout: 30_000 }));
    expect(err).toMatchObject({ code: -32001, message: expect.stringContaining('no response within 1000 ms') });
    // a's call has by now waited longer than requestMs, for the answer.
    expect(await answerItem(daemon, item.id, { action: 'accept', content: { name: 'Dana' } })).toMatchObject({ status: 204 });
    const answered = await asking;
    expect(answered.isError).toBeFalsy();
    expect((answered.content as { text: string }[])[0].text).toContain('Dana');
  });
});

describe('isolation between upstreams', () => {
  it('a slow call on one upstream does not hold up calls to another', async () => {
    const daemon = await startDaemon({ mcpServers: { a: stdioFixture({ FIXTURE_NAME: 'a' }), b: stdioFixture({ FIXTURE_NAME: 'b' }) } });
    const client = await host(daemon);
    let slowDone = false;
    const slow = client.callTool({ name: 'a__slow', arguments: { ms: 4_000 } }, { timeout: 30_000 }).then(() => (slowDone = true));
    const fast = await client.callTool({ name: 'b__echo', arguments: { text: 'quick' } });
    expect((fast.content as { text: string }[])[0].text).toContain('quick');
    expect(slowDone).toBe(false);
    await slow;
  });

  it('a down upstream fails fast with -32010 naming it', async () => {
    const fixture = await startHttpFixture('http');
    fixtures.push(fixture);
    const daemon = await startDaemon({ mcpServers: { fx: { type: 'http', url: fixture.url } } });
    const client = await host(daemon);
    const tools = await client.listTools();
    await fixture.stop();
    await eventually(async () => (await request(daemon.baseUrl).get('/readyz')).status === 503, 60_000, 'the upstream to be seen down');
    // The name has left the list by now, but the gateway remembers whose it was: the host
    // hears that the upstream is down, not that the tool does not exist.
    const err = await errorOf(client.callTool({ name: 'fx__echo', arguments: { text: 'x' } }));
    expect(tools.tools.some((t) => t.name === 'fx__echo')).toBe(true);
    expect(err).toMatchObject({ code: -32010, data: { server: 'fx', state: expect.stringMatching(/^(down|connecting)$/) } });
    expect((await errorOf(client.callTool({ name: 'fx__nope', arguments: {} })))?.code).toBe(-32602);
  });
});

describe('stopping the daemon', () => {
  it('SIGTERM lets in-flight calls finish, stops every upstream child, and exits 0', async () => {
    const daemon = await startDaemon({ log: { level: 'info' }, mcpServers: { fx: stdioFixture(), fy: stdioFixture({ FIXTURE_NAME: 'fy' }) } });
    const client = await host(daemon);
    const fx = await stats(client);
    const pids = [fx.pid, (await stats(client, 'fy__stats')).pid];
    const inFlight = client.callTool({ name: 'fx__slow', arguments: { ms: 1_500 } }, { timeout: 30_000 });
    // In flight: fx has it when SIGTERM comes.
    await untilAnotherCall(client, fx.calls);
    const exit = daemon.stop('SIGTERM');
    // While it drains, a load balancer's readiness probe must send new traffic elsewhere.
    await daemon.waitForLog(/shutting down: draining in-flight calls/);
    const readyz = await fetch(`${daemon.baseUrl}/readyz`);
    expect(readyz.status).toBe(503);
    expect(await readyz.json()).toMatchObject({ status: 'stopping' });
    const result = await inFlight;
    expect(result.isError).toBeFalsy();
    expect(await exit).toEqual({ code: 0, signal: null });
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  });

  for (const kind of ['http', 'sse'] as const) {
    it(`SIGTERM past shutdownMs cancels the calls still running on a ${kind === 'sse' ? 'legacy HTTP+SSE' : 'Streamable HTTP'} upstream`, async () => {
      const fixture = await startHttpFixture(kind);
      fixtures.push(fixture);
      const daemon = await startDaemon({ timeouts: { shutdownMs: 300 }, mcpServers: { fx: { type: kind, url: fixture.url } } });
      const client = await host(daemon);
      // The count fx starts from, this stats call included: untilAnotherCall counts only from it.
      const { calls } = await stats(client);
      // Far beyond shutdownMs: the drain gives up on it.
      const inFlight = errorOf(client.callTool({ name: 'fx__slow', arguments: { ms: 120_000 } }, { timeout: 120_000 }));
      await untilAnotherCall(client, calls);
      expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      await inFlight;

      const direct = new Client({ name: 'check', version: '1' });
      const url = new URL(fixture.url);
      await direct.connect(kind === 'sse' ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url));
      try {
        const seen = await eventually(async () => {
          const s = (await stats(direct, 'stats')) as Awaited<ReturnType<typeof stats>> & { cancelNotices: number };
          return s.cancelled > 0 ? s : undefined;
        }, 10_000, 'the fixture to see the call cancelled');
        expect(seen).toMatchObject({ cancelled: 1, cancelNotices: 1 });
      } finally {
        await direct.close();
      }
    });
  }

  it('a second SIGTERM while draining exits at once, code 1, and its log line counts the audit rows the exit leaves uncommitted (relaxed: lost)', async () => {
    const dir = tempDir();
    const daemon = await startDaemon(writeConfig({ log: { level: 'info' }, audit: { mode: 'relaxed', flushMs: 60_000 }, mcpServers: { fx: stdioFixture() } }, dir));
    const client = await host(daemon);
    // Answered, and waiting out flushMs in memory: no commit before the exit.
    await client.callTool({ name: 'fx__echo', arguments: { text: 'answered before the signals' } });
    const { calls } = await stats(client);
    const inFlight = errorOf(client.callTool({ name: 'fx__slow', arguments: { ms: 120_000 } }, { timeout: 120_000 }));
    await untilAnotherCall(client, calls);
    daemon.proc.kill('SIGTERM');
    await daemon.waitForLog(/shutting down: draining in-flight calls/, 10_000, 'the drain');
    expect(await daemon.stop('SIGTERM')).toEqual({ code: 1, signal: null });
    await inFlight;
    const told = /"auditRowsUncommitted":(\d+).*"msg":"second signal while draining: exiting now, [^"]*; (\d+) audit rows not yet committed are lost"/.exec(daemon.stderr());
    expect(told, daemon.stderr()).not.toBeNull();
    expect(Number(told![2])).toBe(Number(told![1]));
    expect(Number(told![2])).toBeGreaterThanOrEqual(2);
    expect(auditRows(join(dir, 'data'), `name = 'fx__echo'`)).toEqual([]);
  });

  it('SIGKILL leaves no orphan upstream processes', async () => {
    const daemon = await startDaemon({ mcpServers: { fx: stdioFixture(), fy: stdioFixture({ FIXTURE_NAME: 'fy' }) } });
    const client = await host(daemon);
    const pids = [(await stats(client)).pid, (await stats(client, 'fy__stats')).pid];
    await daemon.stop('SIGKILL');
    await eventually(() => pids.every((pid) => !isAlive(pid)), 10_000, 'the upstream children to exit');
  });
});
