import type { AuditEntry, AuditLog } from '@switchboard/audit';
import type { GatewayConfig, ServerConfig } from '@switchboard/config';
import { Cancellation, McpError, type PeerRequestOptions, type RequestId } from '@switchboard/core';
import type { ServerRequest, SessionConnections, UpstreamConnection } from '@switchboard/upstream';
import { Inbox } from '@switchboard/inbox';
import { describe, expect, it } from 'vitest';
import type { RelayServices } from '../relay.types.js';
import { SessionDirectory, type DownstreamSession } from '../session.js';
import { answeringPinnedRoots } from './pinned-roots.js';
import { ServerRequestRelay } from './server-request-relay.js';
import type { RelayOrigin } from './relay-origin.js';

type Item = Record<string, unknown>;

/** A host session that answers every question with who it is (and declines elicitations). */
function host(id: string, principal: string, clientCapabilities: Item, asked: string[], protocolVersion = '2025-06-18'): DownstreamSession {
  return {
    id,
    transport: 'streamable-http',
    principal: { id: principal, authMethod: 'api-key' },
    protocolVersion,
    clientCapabilities,
    clientInfo: { name: `host-${id}`, version: '1' },
    initialized: true,
    send: async () => undefined,
    request: async (method: string) => {
      asked.push(`${id}:${method}`);
      if (method === 'elicitation/create') return { action: 'decline' };
      return method === 'roots/list' ? { roots: [{ uri: `file:///${id}` }] } : { answeredBy: id };
    },
  } as DownstreamSession;
}

function world(servers: Partial<ServerConfig>[] = [{ name: 'shell', isolation: 'per-session' }]) {
  const asked: string[] = [];
  const rows: { entry: AuditEntry; args: unknown }[] = [];
  const sessions = new SessionDirectory();
  const a = host('a', 'alice', { roots: {}, sampling: {} }, asked);
  const b = host('b', 'alice', { roots: {}, sampling: {} }, asked);
  sessions.add(a);
  sessions.add(b);
  // Connections stand in by identity only: the relay asks the pool whose one is.
  const owned = new Map<UpstreamConnection, string>();
  const connection = (name: string, owner?: string) => {
    const c = { name } as UpstreamConnection;
    if (owner !== undefined) owned.set(c, owner);
    return c;
  };
  const services = {
    sessions,
    config: () => ({ servers, auth: { mode: 'none' } }) as GatewayConfig,
    sessionConnections: { ownerOf: (c: UpstreamConnection) => owned.get(c) } as SessionConnections,
    audit: {
      record: async (entry: AuditEntry, args: unknown) => void rows.push({ entry, args }),
      recordUnrelayed: async (entry: AuditEntry, args: unknown) => void rows.push({ entry, args }),
    } as unknown as AuditLog,
  } as unknown as RelayServices;
  const relay = new ServerRequestRelay(services, () => ({ timeoutMs: 1000, maxSamplingTokens: 100, inbox: false }));
  const handler = answeringPinnedRoots(services, relay.handle);
  const ask = (c: UpstreamConnection, method: string, params: Item = {}) =>
    handler({ connection: c, request: { jsonrpc: '2.0', id: 7, method, params }, signal: new AbortController().signal, related: false, candidates: [], attribute: () => undefined } as ServerRequest);
  return { asked, rows, sessions, connection, ask };
}

describe('relay routing for per-session connections', () => {
  it("sends a question with nothing in flight to the session that owns the connection, not to the principal's other session", async () => {
    const { asked, connection, ask } = world();
    expect(await ask(connection('shell', 'b'), 'roots/list')).toEqual({ roots: [{ uri: 'file:///b' }] });
    expect(asked).toEqual(['b:roots/list']);
  });

  it('refuses when the owning session has ended, and never asks another', async () => {
    const { asked, sessions, connection, ask } = world();
    sessions.remove('a');
    const error = await ask(connection('shell', 'a'), 'roots/list').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).message).toContain('the session that owns the connection has ended');
    expect(asked).toEqual([]);
  });

  it('refuses for a shared connection with nothing in flight, as before', async () => {
    const { asked, connection, ask } = world([{ name: 'shared', isolation: 'shared' }]);
    const error = await ask(connection('shared'), 'roots/list').catch((e: unknown) => e);
    expect((error as McpError).message).toContain('no host request is in flight');
    expect(asked).toEqual([]);
  });
});

describe('relay routing for per-principal connections', () => {
  it("asks the owner's one session that can answer, counting its revision: a 2025-03-26 host declaring elicitation cannot", async () => {
    const asked: string[] = [];
    const sessions = new SessionDirectory();
    sessions.add(host('old', 'alice', { elicitation: {} }, asked, '2025-03-26'));
    sessions.add(host('new', 'alice', { elicitation: {} }, asked));
    const mine = { name: 'notes' } as UpstreamConnection;
    const services = { sessions, principalConnections: { ownerOf: (c: UpstreamConnection) => (c === mine ? 'alice' : undefined) } } as unknown as RelayServices;
    const relay = new ServerRequestRelay(services, () => ({ timeoutMs: 1000, maxSamplingTokens: 100, inbox: false }));
    const params = { message: 'Who?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } };
    const result = await relay.handle({
      connection: mine,
      request: { jsonrpc: '2.0', id: 7, method: 'elicitation/create', params },
      signal: new AbortController().signal,
      related: false,
      candidates: [],
      attribute: () => undefined,
    } as ServerRequest);
    expect(result).toEqual({ action: 'decline' });
    expect(asked).toEqual(['new:elicitation/create']);
  });
});

describe('a question several sessions may have caused, for the inbox', () => {
  const form = { message: 'Who?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } };

  function inboxWorld() {
    const sessions = new SessionDirectory();
    const [a, b, c] = [host('a', 'alice', {}, []), host('b', 'alice', {}, []), host('c', 'bob', {}, [])];
    for (const s of [a, b, c]) sessions.add(s);
    const inbox = new Inbox();
    const services = { sessions, inbox, config: () => ({ servers: [], auth: { mode: 'required' } }) as unknown as GatewayConfig } as unknown as RelayServices;
    const relay = new ServerRequestRelay(services, () => ({ timeoutMs: 60_000, maxSamplingTokens: 100, inbox: true }));
    const shared = { name: 'shared' } as UpstreamConnection;
    // What the relay said the last question was about (the requests whose idle timeouts wait).
    const about: { ids?: unknown[] } = {};
    // A stdio upstream cannot say which request asked: every request in flight is a candidate.
    const ask = (...from: DownstreamSession[]) =>
      relay.handle({
        connection: shared,
        request: { jsonrpc: '2.0', id: 7, method: 'elicitation/create', params: form },
        signal: new AbortController().signal,
        related: false,
        candidates: from.map((session, i) => ({ session, requestId: i + 1 })),
        attribute: (origins) => void (about.ids = origins.map((o) => (o as RelayOrigin).requestId)),
      } as ServerRequest);
    return { inbox, ask, a, b, c, about };
  }

  it("is about the calls in flight of the one session or principal it is put to, and about none of several principals'", async () => {
    const { inbox, ask, a, b, c, about } = inboxWorld();
    const asked = [ask(a, c).catch((e: unknown) => e)];
    expect(about.ids).toEqual([]);
    asked.push(ask(a).catch((e: unknown) => e));
    expect(about.ids).toEqual([1]);
    asked.push(ask(a, b).catch((e: unknown) => e));
    expect(about.ids).toEqual([1, 2]);
    inbox.withdrawAll();
    await Promise.all(asked);
  });

  it("is the principal's when every candidate session is theirs: they see it, and it counts against their share", async () => {
    const { inbox, ask, a, b } = inboxWorld();
    const asked = Array.from({ length: 50 }, () => ask(a, b).catch((e: unknown) => e));
    expect(inbox.visibleTo({ principal: 'alice', admin: false })).toHaveLength(50);
    expect(inbox.visibleTo({ principal: 'alice', admin: false })[0]).toMatchObject({ principal: 'alice', server: 'shared' });
    await expect(ask(a, b)).rejects.toMatchObject({ code: -32600, message: 'The inbox already holds 50 pending questions for alice' });
    inbox.withdrawAll();
    await Promise.all(asked);
  });

  it("belongs to nobody (admins only) when the candidates are several principals' sessions", async () => {
    const { inbox, ask, a, c } = inboxWorld();
    const asked = ask(a, c).catch((e: unknown) => e);
    expect(inbox.visibleTo({ principal: 'root', admin: true })).toMatchObject([{ principal: null }]);
    expect(inbox.visibleTo({ principal: 'alice', admin: false })).toEqual([]);
    inbox.withdrawAll();
    await asked;
  });
});

describe('a host that may have no stream open (Streamable HTTP without a GET stream)', () => {
  const form = { message: 'Who?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } };

  /** A form-capable host whose requests `open` still have their streams, and no GET stream. */
  function streamWorld(open: RequestId[], inbox?: Inbox) {
    const sent: { method: string; options?: PeerRequestOptions }[] = [];
    const session = {
      ...host('a', 'alice', { elicitation: { form: {} }, roots: {} }, []),
      canReach: (related?: RequestId) => related !== undefined && open.includes(related),
      request: (method: string, _params: Item, options?: PeerRequestOptions) => {
        sent.push({ method, options });
        // Answered only when withdrawn: the test looks at what is pending.
        return new Promise<Item>((_resolve, reject) => options?.signal?.addEventListener('abort', () => reject(new McpError(-32001, 'withdrawn'))));
      },
    } as DownstreamSession;
    const sessions = new SessionDirectory();
    sessions.add(session);
    const perSession = { name: 'shell' } as UpstreamConnection;
    const services = {
      sessions,
      inbox,
      config: () => ({ servers: [], auth: { mode: 'none' } }) as unknown as GatewayConfig,
      sessionConnections: { ownerOf: (c: UpstreamConnection) => (c === perSession ? 'a' : undefined) } as SessionConnections,
    } as unknown as RelayServices;
    const relay = new ServerRequestRelay(services, () => ({ timeoutMs: 60_000, maxSamplingTokens: 100, inbox: inbox !== undefined }));
    const ask = (method: string, params: Item, candidates: unknown[] = [], connection: UpstreamConnection = { name: 'shared' } as UpstreamConnection) =>
      relay.handle({ connection, request: { jsonrpc: '2.0', id: 7, method, params }, signal: new AbortController().signal, related: false, candidates, attribute: () => undefined } as ServerRequest);
    return { session, sent, ask, perSession };
  }

  it('sends a question two of its requests may have caused on the stream of one still open, and withdraws it only when both have ended', async () => {
    const { session, sent, ask } = streamWorld([2]);
    const [first, second] = [new Cancellation(), new Cancellation()];
    const answer = ask('elicitation/create', form, [
      { session, requestId: 1, signal: first },
      { session, requestId: 2, signal: second },
    ]).catch((e: unknown) => e);
    expect(sent).toMatchObject([{ method: 'elicitation/create', options: { relatedRequestId: 2 } }]);
    const signal = sent[0].options!.signal!;
    second.abort();
    expect(signal.aborted).toBe(false);
    first.abort();
    expect(signal.aborted).toBe(true);
    expect(await answer).toBeInstanceOf(McpError);
  });

  it('refuses at once, rather than send it nowhere, when nothing of the host is open', async () => {
    const { session, sent, ask, perSession } = streamWorld([]);
    const error = await ask('roots/list', {}, [], perSession).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -32602, message: expect.stringContaining('The host has no open stream to receive roots/list') });
    const several = await ask('roots/list', {}, [{ session, requestId: 1 }, { session, requestId: 2 }]).catch((e: unknown) => e);
    expect(several).toMatchObject({ code: -32602, message: expect.stringContaining('no open stream') });
    expect(sent).toEqual([]);
  });

  it("puts an elicitation it cannot deliver in the inbox, as the principal's", async () => {
    const inbox = new Inbox();
    const { sent, ask, perSession } = streamWorld([], inbox);
    const answer = ask('elicitation/create', form, [], perSession).catch((e: unknown) => e);
    expect(inbox.visibleTo({ principal: 'alice', admin: false })).toMatchObject([{ principal: 'alice', server: 'shell' }]);
    inbox.withdrawAll();
    await answer;
    expect(sent).toEqual([]);
  });
});

describe('pinned roots', () => {
  const pinned = [{ name: 'files', isolation: 'per-session' as const, roots: [{ uri: 'file:///srv/p', name: 'p' }] }];

  it('are answered from the config without asking any host, and recorded as relay:pinned-roots', async () => {
    const { asked, rows, connection, ask } = world(pinned);
    expect(await ask(connection('files', 'a'), 'roots/list')).toEqual({ roots: [{ uri: 'file:///srv/p', name: 'p' }] });
    expect(asked).toEqual([]);
    expect(rows).toHaveLength(1);
    expect(rows[0].entry).toMatchObject({
      method: 'roots/list',
      upstream: 'files',
      decision: 'allowed',
      rule: 'relay:pinned-roots',
      outcome: 'ok',
      principal: 'alice',
      sessionId: 'a',
      clientName: 'host-a',
    });
    expect(rows[0].args).toEqual({ request: {}, answer: { roots: [{ uri: 'file:///srv/p', name: 'p' }] } });
  });

  it('are answered for a shared connection too, under the gateway when no session is known', async () => {
    const { asked, rows, connection, ask } = world([{ ...pinned[0], isolation: 'shared' }]);
    expect(await ask(connection('files'), 'roots/list')).toEqual({ roots: [{ uri: 'file:///srv/p', name: 'p' }] });
    expect(asked).toEqual([]);
    expect(rows[0].entry).toMatchObject({ principal: 'switchboard', authMethod: 'internal', sessionId: null });
  });

  it('leave the other questions to the relay', async () => {
    const { asked, connection, ask } = world(pinned);
    const error = await ask(connection('files', 'a'), 'sampling/createMessage', { messages: [], maxTokens: 5 }).catch((e: unknown) => e);
    // Refused by the sampling rule (no policy allows it), after routing to the owner.
    expect((error as McpError).message).toContain('Sampling is not allowed');
    expect(asked).toEqual([]);
  });
});
