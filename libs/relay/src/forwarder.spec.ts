import type { JsonRpcRequest, PeerRequestOptions } from '@switchboard/core';
import { McpError } from '@switchboard/core';
import type { UpstreamConnection } from '@switchboard/upstream';
import { describe, expect, it, vi } from 'vitest';
import { Forwarder, MAX_PROGRESS_PER_SECOND, progressRate } from './forwarder.js';
import { ConnectionOwners } from './connection-owners.js';
import { SessionDirectory, type DownstreamSession } from './session.js';
import type { RelayOrigin } from './server-requests/relay-origin.js';
import { UrlElicitations } from './server-requests/url-elicitations.js';

const request: JsonRpcRequest = { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'ask' } };

/** An upstream connection whose one request is settled by the test; `origin` is what the forwarder attached. */
function upstream() {
  const seen: { origin?: RelayOrigin; settle?: (error?: Error) => void } = {};
  const connection = {
    name: 'auth',
    config: { timeouts: { requestMs: 1000, maxRequestMs: 5000 } },
    request: (_method: string, _params: unknown, options: PeerRequestOptions) =>
      new Promise((resolve, reject) => {
        seen.origin = options.origin as RelayOrigin;
        seen.settle = (error) => (error ? reject(error) : resolve({ content: [] }));
      }),
  } as unknown as UpstreamConnection;
  return { connection, seen };
}

describe('Forwarder', () => {
  it.each([
    ['answered', undefined],
    ['timed out', new McpError(-32001, 'Request timed out: the maximum request time was reached')],
  ])('withdraws the questions a call caused once the call has %s upstream', async (_how, error) => {
    const { connection, seen } = upstream();
    const host = new AbortController();
    const call = new Forwarder().forward({} as DownstreamSession, request, connection, {}, { signal: host.signal });
    expect(seen.origin).toMatchObject({ requestId: 4 });
    expect(seen.origin!.signal!.aborted).toBe(false);
    seen.settle!(error);
    await call.catch(() => undefined);
    expect(seen.origin!.signal!.aborted).toBe(true);
  });

  it('withdraws them when the host cancels its call', () => {
    const { connection, seen } = upstream();
    const host = new AbortController();
    void new Forwarder().forward({} as DownstreamSession, request, connection, {}, { signal: host.signal });
    host.abort();
    expect(seen.origin!.signal!.aborted).toBe(true);
  });

  it('passes a -32042 back as it is, and the completion of its elicitation later reaches the same host', async () => {
    const { connection, seen } = upstream();
    const sessions = new SessionDirectory();
    const urls = new UrlElicitations(() => 60_000, sessions, new ConnectionOwners(new Map([['auth', connection]]), []));
    const sent: unknown[] = [];
    const session = { id: 's1', clientCapabilities: { elicitation: { url: {} } }, send: async (n: unknown) => void sent.push(n) } as unknown as DownstreamSession;
    sessions.add(session);
    const call = new Forwarder(urls).forward(session, request, connection, {}, { signal: new AbortController().signal });
    const required = new McpError(-32042, 'URL elicitation required', { elicitations: [{ mode: 'url', elicitationId: 'e42', url: 'https://a.example/', message: 'Sign in' }] });
    seen.settle!(required);
    await expect(call).rejects.toBe(required);
    const complete = { jsonrpc: '2.0' as const, method: 'notifications/elicitation/complete', params: { elicitationId: 'e42' } };
    urls.notification('auth', complete);
    expect(sent).toEqual([complete]);
  });
});

describe("the upstream's progress", () => {
  const RELATED = 'io.modelcontextprotocol/related-task';

  /** Forwards a call with a progress token; returns the upstream's onProgress and what the host was sent. */
  function call(how: Parameters<Forwarder['forward']>[5] = {}) {
    const sent: { params: Record<string, unknown> }[] = [];
    const session = { id: 's', send: async (n: { params: Record<string, unknown> }) => void sent.push(n) } as unknown as DownstreamSession;
    let onProgress: PeerRequestOptions['onProgress'];
    const connection = {
      name: 'jobs',
      config: { timeouts: { requestMs: 1000, maxRequestMs: 5000 } },
      request: (_m: string, _p: unknown, options: PeerRequestOptions) => {
        onProgress = options.onProgress;
        return new Promise(() => undefined);
      },
    } as unknown as UpstreamConnection;
    const params = { _meta: { progressToken: 'host-token' } };
    void new Forwarder().forward(session, request, connection, params, { signal: new AbortController().signal }, how);
    return { progress: (p: Record<string, unknown>) => onProgress!(p), sent };
  }

  it("reaches the host under its own token, without the upstream's task id", () => {
    const { progress, sent } = call();
    progress({ progressToken: 1, progress: 1, _meta: { [RELATED]: { taskId: 'upstream-task' }, other: 1 } });
    expect(sent.map((n) => n.params)).toEqual([{ progressToken: 'host-token', progress: 1, _meta: { other: 1 } }]);
  });

  it('is related as the way the call was sent says (a relayed task: to the gateway task)', () => {
    const { progress, sent } = call({ relate: (p) => ({ ...p, _meta: { [RELATED]: { taskId: 'gateway-task' } } }) });
    progress({ progressToken: 1, progress: 1, _meta: { [RELATED]: { taskId: 'upstream-task' } } });
    expect(sent.map((n) => n.params)).toEqual([{ progressToken: 'host-token', progress: 1, _meta: { [RELATED]: { taskId: 'gateway-task' } } }]);
  });
});

describe('progressRate', () => {
  it('passes 20 a second and drops the rest, until the next second', () => {
    vi.useFakeTimers();
    try {
      vi.setSystemTime(10_000);
      const withinRate = progressRate();
      const first = Array.from({ length: 25 }, () => withinRate());
      expect(first.filter(Boolean)).toHaveLength(MAX_PROGRESS_PER_SECOND);
      expect(first.slice(0, 20).every(Boolean)).toBe(true);
      vi.setSystemTime(10_999);
      expect(withinRate()).toBe(false);
      vi.setSystemTime(11_000);
      expect(withinRate()).toBe(true);
      // Each request has its own count.
      expect(progressRate()()).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
