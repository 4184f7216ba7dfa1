import { afterEach, describe, expect, it, vi } from 'vitest';
import { Cancellation, abandonmentOf, answerDecided, type CancelSignal } from './cancellation.js';
import { ErrorCode, McpError } from './core.errors.js';
import type { JsonRpcMessage, JsonRpcRequest } from './jsonrpc.js';
import { JsonRpcPeer, type PeerHandlers } from './jsonrpc-peer.js';

/** Two peers wired back to back, as a host and a server would be over a transport. */
function pair(serverHandlers: Partial<PeerHandlers> = {}) {
  const sentByClient: JsonRpcMessage[] = [];
  const sentByServer: JsonRpcMessage[] = [];
  let server!: JsonRpcPeer;
  const client = new JsonRpcPeer(
    async (m) => {
      sentByClient.push(m);
      queueMicrotask(() => server.handle(m));
    },
    { onRequest: async () => ({}), onNotification: () => undefined },
  );
  server = new JsonRpcPeer(
    async (m) => {
      sentByServer.push(m);
      queueMicrotask(() => client.handle(m));
    },
    { onRequest: async () => ({}), onNotification: () => undefined, ...serverHandlers },
  );
  return { client, server, sentByClient, sentByServer };
}

/**
 * A peer whose handler answers `result` only once `release()` is called, after `onStart` (if
 * any) with the request's signal: what it sent, the ids it was told were cancelled, and the signal.
 */
function heldPeer(result: Record<string, unknown>, onStart?: (signal: CancelSignal) => void) {
  const sent: JsonRpcMessage[] = [];
  const cancelled: unknown[] = [];
  let release!: () => void;
  let signal!: CancelSignal;
  const peer = new JsonRpcPeer(async (m) => void sent.push(m), {
    onRequest: async (_r, ctx) => {
      signal = ctx.signal;
      onStart?.(ctx.signal);
      await new Promise<void>((resolve) => (release = resolve));
      return result;
    },
    onNotification: () => undefined,
    onRequestCancelled: (id) => cancelled.push(id),
  });
  return { peer, sent, cancelled, release: () => release(), signal: () => signal };
}

afterEach(() => vi.useRealTimers());

describe('JsonRpcPeer', () => {
  it('correlates a response with its request', async () => {
    const { client } = pair({ onRequest: async (r) => ({ echoed: r.params?.x }) });
    await expect(client.request('m', { x: 1 })).resolves.toEqual({ echoed: 1 });
    expect(client.pendingCount).toBe(0);
  });

  it('refuses a request whose id a running request uses; the running one is still answered, once', async () => {
    const sent: JsonRpcMessage[] = [];
    let release!: () => void;
    const peer = new JsonRpcPeer(async (m) => void sent.push(m), {
      onRequest: (r) => (r.method === 'slow' ? new Promise((resolve) => (release = () => resolve({ slow: true }))) : Promise.resolve({})),
      onNotification: () => undefined,
    });
    peer.handle({ jsonrpc: '2.0', id: 7, method: 'slow' });
    expect(peer.isHandling(7)).toBe(true);
    peer.handle({ jsonrpc: '2.0', id: 7, method: 'ping' });
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]).toMatchObject({ id: 7, error: { code: ErrorCode.InvalidRequest, message: expect.stringContaining('already used') } });
    release();
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    expect(sent[1]).toEqual({ jsonrpc: '2.0', id: 7, result: { slow: true } });
    expect(peer.isHandling(7)).toBe(false);
  });

  it('tells the transport when the other side cancels a request, which then gets no response', async () => {
    const sent: JsonRpcMessage[] = [];
    const cancelled: unknown[] = [];
    const peer = new JsonRpcPeer(async (m) => void sent.push(m), {
      onRequest: (_r, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve({ late: true }))),
      onNotification: () => undefined,
      onRequestCancelled: (id) => cancelled.push(id),
    });
    peer.handle({ jsonrpc: '2.0', id: 'x', method: 'slow' });
    peer.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'x' } });
    expect(cancelled).toEqual(['x']);
    await new Promise((r) => setTimeout(r, 10));
    expect(sent).toEqual([]);
    expect(peer.isHandling('x')).toBe(false);
  });

  it('with onAnswer, hands the result over before any later message is handled; one that throws fails the request', async () => {
    const sent: JsonRpcMessage[] = [];
    const seen: string[] = [];
    const peer = new JsonRpcPeer(async (m) => void sent.push(m), { onRequest: async () => ({}), onNotification: (n) => void seen.push(n.method) });
    const answered = peer.request('m', {}, { onAnswer: (r) => void seen.push(`answer ${String(r.n)}`) });
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    const id = (sent[0] as JsonRpcRequest).id;
    // One chunk: the answer and a notification right after it, handled in one go.
    peer.handle({ jsonrpc: '2.0', id, result: { n: 1 } });
    peer.handle({ jsonrpc: '2.0', method: 'notifications/after' });
    expect(seen).toEqual(['answer 1', 'notifications/after']);
    await expect(answered).resolves.toEqual({ n: 1 });

    const failing = peer.request('m', {}, { onAnswer: () => { throw new Error('no room'); } });
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    peer.handle({ jsonrpc: '2.0', id: (sent[1] as JsonRpcRequest).id, result: {} });
    await expect(failing).rejects.toThrow('no room');
    expect(peer.pendingCount).toBe(0);
  });

  it('turns an error response into McpError with code, message and data', async () => {
    const { client } = pair({
      onRequest: async () => {
        throw new McpError(-32042, 'URL elicitation required', { elicitations: [] });
      },
    });
    const err = await client.request('m', undefined).catch((e) => e);
    expect(err).toBeInstanceOf(McpError);
    expect(err).toMatchObject({ code: -32042, message: 'URL elicitation required', data: { elicitations: [] } });
  });

  it('never leaks an internal error: -32603 with a generic message, detail to the hook', async () => {
    const seen: unknown[] = [];
    const { client } = pair({
      onRequest: async () => {
        throw new Error('secret stack detail');
      },
      onInternalError: (e) => seen.push(e),
    });
    const err = await client.request('m', undefined).catch((e) => e);
    expect(err).toMatchObject({ code: ErrorCode.InternalError, message: 'Internal error' });
    expect(String(seen[0])).toContain('secret stack detail');
  });

  it('adds its own progress token and routes progress to the caller', async () => {
    const progress: unknown[] = [];
    let server!: JsonRpcPeer;
    const client = new JsonRpcPeer(async (m) => queueMicrotask(() => server.handle(m)), {
      onRequest: async () => ({}),
      onNotification: () => undefined,
    });
    server = new JsonRpcPeer(async (m) => queueMicrotask(() => client.handle(m)), {
      onRequest: async (r: JsonRpcRequest) => {
        const token = (r.params?._meta as { progressToken: number }).progressToken;
        await server.notify('notifications/progress', { progressToken: token, progress: 1, total: 2 });
        return {};
      },
      onNotification: () => undefined,
    });
    await client.request('slow', { a: 1 }, { onProgress: (p) => progress.push(p) });
    expect(progress).toEqual([{ progressToken: 1, progress: 1, total: 2 }]);
  });

  it('with progressUntil, routes progress under an answered request\'s token until that signal aborts, and not after', async () => {
    const progress: unknown[] = [];
    const unrouted: string[] = [];
    const peer = new JsonRpcPeer(async () => undefined, { onRequest: async () => ({}), onNotification: (n) => void unrouted.push(n.method) });
    const taskEnded = new Cancellation();
    const answered = peer.request('tools/call', {}, { onProgress: (p) => progress.push(p.progress), progressUntil: taskEnded });
    peer.handle({ jsonrpc: '2.0', id: 1, result: { task: { taskId: 't' } } });
    await answered;
    peer.handle({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
    taskEnded.abort();
    peer.handle({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 2 } });
    expect(progress).toEqual([1]);
    expect(unrouted).toEqual(['notifications/progress']);

    // Without it, as before: the token ends with the answer.
    const plain = peer.request('tools/call', {}, { onProgress: (p) => progress.push(p.progress) });
    peer.handle({ jsonrpc: '2.0', id: 2, result: {} });
    await plain;
    peer.handle({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 2, progress: 3 } });
    expect(progress).toEqual([1]);
  });

  it('an aborted signal sends notifications/cancelled and rejects', async () => {
    const sent: JsonRpcMessage[] = [];
    const peer = new JsonRpcPeer(async (m) => void sent.push(m), { onRequest: async () => ({}), onNotification: () => undefined });
    const ac = new AbortController();
    const p = peer.request('m', undefined, { signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(McpError);
    expect(sent.map((m) => ('method' in m ? m.method : 'response'))).toEqual(['m', 'notifications/cancelled']);
  });

  it('a cancelled inbound request is aborted and gets no response', async () => {
    const sent: JsonRpcMessage[] = [];
    let aborted = false;
    const peer = new JsonRpcPeer(async (m) => void sent.push(m), {
      onRequest: (_r, ctx) =>
        new Promise((resolve) => ctx.signal.addEventListener('abort', () => ((aborted = true), resolve({})))),
      onNotification: () => undefined,
    });
    peer.handle({ jsonrpc: '2.0', id: 'a', method: 'slow' });
    peer.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a' } });
    await new Promise((r) => setTimeout(r, 0));
    expect(aborted).toBe(true);
    expect(sent).toEqual([]);
  });

  it('a channel that throws fails that message as a rejection: a notification rejects, a request rejects and is not left pending', async () => {
    const peer = new JsonRpcPeer(
      () => {
        throw new RangeError('Maximum call stack size exceeded');
      },
      { onRequest: async () => ({}), onNotification: () => undefined },
    );
    expect(() => void peer.notify('notifications/progress', {}).catch(() => undefined)).not.toThrow();
    await expect(peer.notify('notifications/progress', {})).rejects.toBeInstanceOf(RangeError);
    await expect(peer.request('m', {})).rejects.toBeInstanceOf(RangeError);
    expect(peer.pendingCount).toBe(0);
  });

  it('an answer the channel cannot encode is replaced, once, by -32603 under its id; the hook is told why', async () => {
    const sent: JsonRpcMessage[] = [];
    const told: unknown[] = [];
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { deep };
    const peer = new JsonRpcPeer(
      (m) => {
        const text = JSON.stringify(m); // throws RangeError on the deep result, as a real channel does
        sent.push(JSON.parse(text) as JsonRpcMessage);
        return Promise.resolve();
      },
      { onRequest: async () => ({ deep }), onNotification: () => undefined, onInternalError: (err) => void told.push(err) },
    );
    peer.handle({ jsonrpc: '2.0', id: 'q', method: 'tools/call', params: {} });
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    expect(sent).toEqual([{ jsonrpc: '2.0', id: 'q', error: { code: ErrorCode.InternalError, message: 'Internal error' } }]);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ message: 'the answer to tools/call could not be encoded: sent -32603 instead', cause: expect.any(RangeError) });
  });

  it('a cancel of initialize is ignored (no client may cancel it): the request goes on and is answered', async () => {
    const held = heldPeer({ protocolVersion: '2025-06-18' });
    held.peer.handle({ jsonrpc: '2.0', id: 0, method: 'initialize' });
    held.peer.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0 } });
    expect(held.signal().aborted).toBe(false);
    expect(held.cancelled).toEqual([]);
    held.release();
    await new Promise((r) => setTimeout(r, 0));
    expect(held.sent).toEqual([{ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } }]);
  });

  it('a cancel that arrives once the answer is decided (answerDecided) is late: ignored, and the answer is sent', async () => {
    // As strict mode waits for the row's write before it releases the answer.
    const { peer, sent, cancelled, release, signal } = heldPeer({ answer: 42 }, answerDecided);
    peer.handle({ jsonrpc: '2.0', id: 'a', method: 'tools/call' });
    await new Promise((r) => setTimeout(r, 0));
    peer.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a' } });
    expect(signal().aborted).toBe(false);
    expect(cancelled).toEqual([]);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(sent).toEqual([{ jsonrpc: '2.0', id: 'a', result: { answer: 42 } }]);
  });

  it('a close still aborts a request whose answer is decided: there is nobody to send it to', async () => {
    let signal!: CancelSignal;
    const peer = new JsonRpcPeer(async () => undefined, {
      onRequest: (_r, ctx) => ((signal = ctx.signal), answerDecided(ctx.signal), new Promise(() => undefined)),
      onNotification: () => undefined,
    });
    peer.handle({ jsonrpc: '2.0', id: 'a', method: 'tools/call' });
    await new Promise((r) => setTimeout(r, 0));
    peer.close(new McpError(ErrorCode.ConnectionClosed, 'Session ended'));
    expect(abandonmentOf(signal)).toEqual({ kind: 'closed' });
  });

  it("says why an inbound request was given up: the sender's cancel and its reason, or a close and what the transport told it", () => {
    const signals = new Map<string, CancelSignal>();
    const peer = new JsonRpcPeer(async () => undefined, {
      onRequest: (r, ctx) => (signals.set(String(r.id), ctx.signal), new Promise(() => undefined)),
      onNotification: () => undefined,
    });
    for (const id of ['a', 'b', 'c']) peer.handle({ jsonrpc: '2.0', id, method: 'slow' });
    peer.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a', reason: 'user stopped' } });
    peer.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'b' } });
    expect(abandonmentOf(signals.get('a'))).toEqual({ kind: 'cancelled', reason: 'user stopped' });
    expect(abandonmentOf(signals.get('b'))).toEqual({ kind: 'cancelled' });
    expect(abandonmentOf(signals.get('c'))).toBeUndefined();
    const told = { code: ErrorCode.ConnectionClosed, message: 'Session ended before the request completed' };
    peer.close(new McpError(ErrorCode.ConnectionClosed, 'Session ended'), { told });
    expect(abandonmentOf(signals.get('c'))).toEqual({ kind: 'closed', told });

    const quiet = new JsonRpcPeer(async () => undefined, {
      onRequest: (_r, ctx) => (signals.set('d', ctx.signal), new Promise(() => undefined)),
      onNotification: () => undefined,
    });
    quiet.handle({ jsonrpc: '2.0', id: 'd', method: 'slow' });
    quiet.close(new McpError(ErrorCode.ConnectionClosed, 'Session ended'));
    expect(abandonmentOf(signals.get('d'))).toEqual({ kind: 'closed' });
  });

  it('close rejects everything in flight and refuses new requests', async () => {
    const peer = new JsonRpcPeer(async () => undefined, { onRequest: async () => ({}), onNotification: () => undefined });
    const p = peer.request('m', undefined);
    peer.close(new McpError(ErrorCode.ConnectionClosed, 'gone'));
    await expect(p).rejects.toMatchObject({ code: ErrorCode.ConnectionClosed });
    await expect(peer.request('m', undefined)).rejects.toMatchObject({ code: ErrorCode.ConnectionClosed });
  });

  it('close with a reason tells the other side of each request in flight, and only then', async () => {
    const sent: JsonRpcMessage[] = [];
    const peer = new JsonRpcPeer(async (m) => void sent.push(m), { onRequest: async () => ({}), onNotification: () => undefined });
    const quiet = new JsonRpcPeer(async (m) => void sent.push(m), { onRequest: async () => ({}), onNotification: () => undefined });
    const calls = [peer.request('a', undefined), peer.request('b', undefined), quiet.request('c', undefined)];
    peer.close(new McpError(ErrorCode.UpstreamUnavailable, 'stopped'), { cancelReason: 'stopping' });
    quiet.close(new McpError(ErrorCode.ConnectionClosed, 'gone'));
    for (const call of calls) await expect(call).rejects.toBeInstanceOf(McpError);
    expect(sent.filter((m) => !('id' in m))).toEqual([1, 2].map((requestId) => ({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId, reason: 'stopping' },
    })));
  });

  it('a send failure rejects that request', async () => {
    const peer = new JsonRpcPeer(async () => Promise.reject(new Error('EPIPE')), {
      onRequest: async () => ({}),
      onNotification: () => undefined,
    });
    await expect(peer.request('m', undefined)).rejects.toThrow('EPIPE');
    expect(peer.pendingCount).toBe(0);
  });
});
