import { silentLogger } from '@switchboard/observability';
import { DefaultTransportFactory, UpstreamRegistry, type UpstreamConnection } from '@switchboard/upstream';
import { describe, expect, it } from 'vitest';
import { SessionDirectory, type DownstreamSession } from './session.js';
import { SubscriptionManager } from './subscriptions.js';

type Item = Record<string, unknown>;

/** Sessions of one principal, each recording the resources/updated URIs it hears. */
function setup() {
  const sessions = new SessionDirectory();
  const heard: Record<string, string[]> = {};
  const registry = new UpstreamRegistry({ logger: silentLogger(), factory: new DefaultTransportFactory(), client: { name: 't', version: '1' } });
  const subscriptions = new SubscriptionManager(registry, sessions, silentLogger());
  // A principal's own connection (not the registry's): its subscriptions are owned by the principal.
  const connection = { name: 'fx', isAvailable: true, request: async () => ({}) } as unknown as UpstreamConnection;
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
  return { subscriptions, connection, session, heard, updated };
}

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
