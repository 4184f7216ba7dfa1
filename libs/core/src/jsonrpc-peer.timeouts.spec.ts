import { afterEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode, type McpError } from './core.errors.js';
import type { JsonRpcMessage } from './jsonrpc.js';
import { JsonRpcPeer } from './jsonrpc-peer.js';

/** The timeouts of a peer's own requests: idle, hard maximum, and waiting while it is asked about one. */

afterEach(() => vi.useRealTimers());

describe('JsonRpcPeer timeouts', () => {
  it('times out, rejects with -32001 and cancels on the wire', async () => {
    vi.useFakeTimers();
    const sent: JsonRpcMessage[] = [];
    const peer = new JsonRpcPeer(async (m) => void sent.push(m), { onRequest: async () => ({}), onNotification: () => undefined });
    const p = peer.request('m', undefined, { timeoutMs: 1000 });
    const assertion = expect(p).rejects.toMatchObject({ code: ErrorCode.RequestTimeout });
    await vi.advanceTimersByTimeAsync(1001);
    await assertion;
    expect(sent[1]).toMatchObject({ method: 'notifications/cancelled', params: { requestId: 1 } });
  });

  it('progress resets the idle timeout but not the hard maximum', async () => {
    vi.useFakeTimers();
    const peer = new JsonRpcPeer(async () => undefined, { onRequest: async () => ({}), onNotification: () => undefined });
    let settled = false;
    const p = peer.request('m', undefined, { timeoutMs: 1000, maxTotalMs: 2500, onProgress: () => undefined });
    p.catch(() => undefined).finally(() => (settled = true));
    for (let t = 0; t < 2; t++) {
      await vi.advanceTimersByTimeAsync(900);
      peer.handle({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: t } });
    }
    expect(settled).toBe(false); // 1800 ms in, idle timer kept alive by progress
    await vi.advanceTimersByTimeAsync(800);
    await expect(p).rejects.toMatchObject({ code: ErrorCode.RequestTimeout, message: expect.stringContaining('maximum') });
  });

  it('with waitWhileAsked, the idle timeout waits while the other side asks about the request, then starts again', async () => {
    vi.useFakeTimers();
    let answer!: () => void;
    const peer = new JsonRpcPeer(async () => undefined, {
      onRequest: () => new Promise((resolve) => (answer = () => resolve({ action: 'accept' }))),
      onNotification: () => undefined,
    });
    let settled = false;
    const p = peer.request('tools/call', undefined, { timeoutMs: 1000, maxTotalMs: 10_000, waitWhileAsked: true });
    p.catch(() => undefined).finally(() => (settled = true));
    await vi.advanceTimersByTimeAsync(500);
    peer.handle({ jsonrpc: '2.0', id: 'q', method: 'elicitation/create' }, { relatedRequestId: 1 });
    await vi.advanceTimersByTimeAsync(3000);
    expect(settled).toBe(false); // a person may take longer than the idle timeout to answer
    answer();
    await vi.advanceTimersByTimeAsync(900);
    expect(settled).toBe(false); // a full idle period from the answer
    await vi.advanceTimersByTimeAsync(200);
    await expect(p).rejects.toMatchObject({ code: ErrorCode.RequestTimeout, message: expect.stringContaining('1000 ms') });
  });

  it('a question about another request or about none, or a request without waitWhileAsked, keeps the idle timeout', async () => {
    vi.useFakeTimers();
    const cases = [
      { waitWhileAsked: true, question: { relatedRequestId: 99 } },
      // Over stdio no question names a request: it is not about every one in flight.
      { waitWhileAsked: true, question: {} },
      { waitWhileAsked: false, question: { relatedRequestId: 1 } },
    ];
    const assertions = cases.map(({ waitWhileAsked, question }) => {
      const peer = new JsonRpcPeer(async () => undefined, { onRequest: () => new Promise(() => undefined), onNotification: () => undefined });
      const p = peer.request('tools/call', undefined, { timeoutMs: 1000, waitWhileAsked });
      peer.handle({ jsonrpc: '2.0', id: 'q', method: 'elicitation/create' }, question);
      return expect(p).rejects.toMatchObject({ code: ErrorCode.RequestTimeout });
    });
    await vi.advanceTimersByTimeAsync(1001);
    await Promise.all(assertions);
  });

  it('a question the handler says is about a request holds its idle timeout; one it says is about none does not', async () => {
    vi.useFakeTimers();
    const answers: (() => void)[] = [];
    const peer = new JsonRpcPeer(async () => undefined, {
      onRequest: (request, ctx) => {
        ctx.about?.(request.method === 'elicitation/create' ? [1] : []);
        return new Promise((resolve) => answers.push(() => resolve({})));
      },
      onNotification: () => undefined,
    });
    const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (e: McpError) => e.message);
    const asked = outcome(peer.request('tools/call', undefined, { timeoutMs: 1000, maxTotalMs: 10_000, waitWhileAsked: true }));
    const other = outcome(peer.request('tools/call', undefined, { timeoutMs: 1000, maxTotalMs: 10_000, waitWhileAsked: true }));
    // Neither names a request (stdio): the handler says what each is about.
    peer.handle({ jsonrpc: '2.0', id: 'q', method: 'elicitation/create' });
    peer.handle({ jsonrpc: '2.0', id: 'p', method: 'ping' });
    let askedSettled = false;
    void asked.finally(() => (askedSettled = true));
    await vi.advanceTimersByTimeAsync(1001);
    expect(await other).toBe('Request timed out: no response within 1000 ms');
    await vi.advanceTimersByTimeAsync(5000);
    expect(askedSettled).toBe(false); // waits while a person answers
    answers[0]();
    await vi.advanceTimersByTimeAsync(1001);
    expect(await asked).toBe('Request timed out: no response within 1000 ms'); // the idle period, not the maximum
  });
});
