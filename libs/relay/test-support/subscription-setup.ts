import { JsonRpcPeer, type JsonRpcMessage, type JsonRpcRequest } from '@switchboard/core';
import { silentLogger } from '@switchboard/observability';
import { DefaultTransportFactory, UpstreamRegistry, type OwnedConnections, type UpstreamConnection } from '@switchboard/upstream';
import { ConnectionOwners } from '../src/connection-owners.js';
import { SessionDirectory, type DownstreamSession } from '../src/session.js';
import { SubscriptionManager } from '../src/subscriptions.js';

// What the SubscriptionManager specs share: a principal's sessions, and upstreams that answer at once or when told.

export type Item = Record<string, unknown>;

/** Sessions of one principal, each recording the resources/updated URIs it hears. */
export function setup(upstream?: UpstreamConnection) {
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
  const subscriptions = new SubscriptionManager(registry, sessions, silentLogger(), new ConnectionOwners(registry, [pool]));
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
export function slowUpstream(timeouts = { requestMs: 60_000, maxRequestMs: 600_000 }) {
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

export const flush = () => new Promise((r) => setImmediate(r));
export const errorOf = (p: Promise<unknown>) => p.then(() => undefined, (e: { code?: number; message?: string }) => e);
