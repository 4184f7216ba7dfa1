import { ErrorCode, McpError, type CancelSignal } from '@switchboard/core';
import { connectionKey, type UpstreamConnection } from '@switchboard/upstream';
import type { DownstreamSession } from './session.js';

// The state SubscriptionManager keeps per (connection, URI), and the small judgements it
// makes of it, apart from the manager's own ordering of requests (subscriptions.ts).

/** A subscription's key: its connection's (server and owner: ConnectionOwners) and the URI the upstream knows. */
export const keyOf = (server: string, owner: string, uri: string) => `${connectionKey(server, owner)}\u0000${uri}`;

/** A host's subscribe waiting for the upstream to hold the subscription. */
export interface Waiter {
  session: DownstreamSession;
  publicUri: string;
  signal: CancelSignal | undefined;
  /** Answers the host: held (no error), or the upstream's failure, or cancelled. */
  settle(err?: unknown): void;
}

/**
 * What the upstream holds, as far as the gateway knows: `unknown` after a request it gave
 * up on (a timeout), which the upstream may yet have carried out.
 */
export type UpstreamState = 'none' | 'held' | 'unknown';

export interface Subscription {
  server: string;
  /**
   * Whose connection holds it: the principal (per-principal servers), the session id
   * (per-session servers), or '' on a shared one. A server has one isolation, so the two
   * kinds of owner never meet under one server.
   */
  owner: string;
  uri: string;
  /** The connection it was last subscribed through, when the pools no longer name one. */
  connection: UpstreamConnection;
  /** session id -> the URI as that session knows it (the public form): the holders. */
  sessions: Map<string, string>;
  waiters: Waiter[];
  /** Hosts' unsubscribes (of the last holders) waiting for the upstream to be told. */
  releases: (() => void)[];
  upstream: UpstreamState;
  /** Whether a run of subscribe/unsubscribe requests is under way (sync), and its end. */
  busy: boolean;
  syncing: Promise<void> | undefined;
  /** Its renewal failed though hosts hold it: not retried until a host subscribes or it reconnects. */
  stalled: boolean;
  /** Bumped when its connection (re)connects: an answer from before then says nothing of it. */
  epoch: number;
}

export function newSubscription(connection: UpstreamConnection, owner: string, uri: string): Subscription {
  return {
    server: connection.name,
    owner,
    uri,
    connection,
    sessions: new Map(),
    waiters: [],
    releases: [],
    upstream: 'none',
    busy: false,
    syncing: undefined,
    stalled: false,
    epoch: 0,
  };
}

/**
 * Whether a subscribe that failed may have subscribed upstream all the same: one that timed
 * out, which the upstream may not have seen (or done) before the cancel. Not when the
 * upstream refused it or its connection failed (the subscription went with it).
 */
export function mayHaveSubscribed(failure: unknown): boolean {
  return failure instanceof McpError && failure.code === ErrorCode.RequestTimeout;
}

/**
 * The URIs `uri` is a sub-resource of, nearest first: each prefix that ends at a `/`
 * boundary, with and without that `/` (`a://x/y/z` is under `a://x/y/` and `a://x/y`).
 * A prefix ending inside a path segment is no ancestor: `a://x/yz` is not under `a://x/y`.
 */
export function ancestorsOf(uri: string): string[] {
  const out: string[] = [];
  for (let i = uri.lastIndexOf('/', uri.length - 2); i >= 0; i = i === 0 ? -1 : uri.lastIndexOf('/', i - 1)) {
    out.push(uri.slice(0, i + 1));
    if (i > 0) out.push(uri.slice(0, i));
  }
  return out;
}
