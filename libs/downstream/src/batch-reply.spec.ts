import { JsonRpcPeer, McpError, ErrorCode, errorResponse, type JsonRpcMessage, type JsonRpcRequest } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { BatchReplies } from './batch-reply.js';

/** A session's peer wired to BatchReplies the way stdio and legacy SSE wire it. */
function harness() {
  const wire: unknown[] = [];
  const gates = new Map<string | number, (result: Record<string, unknown>) => void>();
  const replies = new BatchReplies((responses) => wire.push(responses));
  const peer: JsonRpcPeer = new JsonRpcPeer(
    async (message, options) => {
      if (!replies.hold(message, options)) wire.push(message);
    },
    {
      onRequest: (request: JsonRpcRequest) => {
        if (request.method === 'fail') return Promise.reject(new McpError(ErrorCode.MethodNotFound, 'no'));
        if (request.method === 'chatty') {
          void peer.notify('notifications/progress', { progressToken: 't', progress: 1 }, { relatedRequestId: request.id });
        }
        if (request.method === 'wait') return new Promise((resolve) => gates.set(request.id, resolve));
        return Promise.resolve({});
      },
      onNotification: () => undefined,
      onRequestCancelled: (id) => replies.cancelled(id),
    },
  );
  const session = { peer, receive: (m: JsonRpcMessage) => peer.handle(m) };
  return { wire, gates, replies, peer, session };
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const req = (id: string | number, method: string): JsonRpcRequest => ({ jsonrpc: '2.0', id, method });

describe('BatchReplies', () => {
  it('answers a batch with one array: responses, failures, intake errors; notifications get nothing', async () => {
    const h = harness();
    const invalid = errorResponse(null, { code: ErrorCode.InvalidRequest, message: 'Invalid request' });
    h.replies.receive(h.session, [req(20, 'ping'), req(21, 'fail'), { jsonrpc: '2.0', method: 'notifications/x' }], [invalid]);
    await tick();
    expect(h.wire).toHaveLength(1);
    const batch = h.wire[0] as { id: unknown }[];
    expect(batch).toHaveLength(3);
    expect(batch).toEqual(
      expect.arrayContaining([
        invalid,
        { jsonrpc: '2.0', id: 20, result: {} },
        { jsonrpc: '2.0', id: 21, error: expect.objectContaining({ code: ErrorCode.MethodNotFound }) },
      ]),
    );
  });

  it('sends messages that are not responses (progress for a batched request) at once, before the array', async () => {
    const h = harness();
    h.replies.receive(h.session, [req(1, 'chatty'), req(2, 'wait')], []);
    await tick();
    expect(h.wire).toEqual([expect.objectContaining({ method: 'notifications/progress' })]);
    h.gates.get(2)!({ done: true });
    await tick();
    expect(h.wire).toHaveLength(2);
    expect(h.wire[1]).toEqual(expect.arrayContaining([{ jsonrpc: '2.0', id: 1, result: {} }, { jsonrpc: '2.0', id: 2, result: { done: true } }]));
  });

  it('leaves single messages alone', async () => {
    const h = harness();
    h.session.receive(req(5, 'ping'));
    await tick();
    expect(h.wire).toEqual([{ jsonrpc: '2.0', id: 5, result: {} }]);
  });

  it('sends nothing for a batch of notifications, and the intake errors alone for one without requests', async () => {
    const h = harness();
    h.replies.receive(h.session, [{ jsonrpc: '2.0', method: 'notifications/x' }], []);
    await tick();
    expect(h.wire).toEqual([]);
    const invalid = errorResponse(7, { code: ErrorCode.InvalidParams, message: 'bad' });
    h.replies.receive(h.session, [{ jsonrpc: '2.0', method: 'notifications/x' }], [invalid]);
    expect(h.wire).toEqual([[invalid]]);
  });

  it('stops waiting for a cancelled request; a batch of only cancelled requests sends nothing', async () => {
    const h = harness();
    h.replies.receive(h.session, [req('a', 'wait'), req('b', 'ping')], []);
    await tick();
    expect(h.wire).toEqual([]);
    h.session.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a' } });
    expect(h.wire).toEqual([[{ jsonrpc: '2.0', id: 'b', result: {} }]]);
    h.gates.get('a')!({});
    await tick();
    expect(h.wire).toHaveLength(1);

    const only = harness();
    only.replies.receive(only.session, [req('c', 'wait')], []);
    await tick();
    only.session.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c' } });
    await tick();
    expect(only.wire).toEqual([]);
  });

  it('answers a member whose id is taken inside the array, and runs only the first', async () => {
    const h = harness();
    h.session.receive(req('x', 'wait'));
    h.replies.receive(h.session, [req('x', 'ping'), req('y', 'ping'), req('y', 'ping')], []);
    await tick();
    expect(h.wire).toHaveLength(1);
    const batch = h.wire[0] as { id: unknown; error?: { code: number } }[];
    expect(batch).toHaveLength(3);
    expect(batch.filter((r) => r.error?.code === ErrorCode.InvalidRequest).map((r) => r.id).sort()).toEqual(['x', 'y']);
    expect(batch).toContainEqual({ jsonrpc: '2.0', id: 'y', result: {} });
    // The running single request still gets its own answer, alone.
    h.gates.get('x')!({ single: true });
    await tick();
    expect(h.wire[1]).toEqual({ jsonrpc: '2.0', id: 'x', result: { single: true } });
  });

  it('flush sends what an open batch has when the session ends, and nothing for an empty one', async () => {
    const h = harness();
    h.replies.receive(h.session, [req(1, 'wait'), req(2, 'ping')], []);
    h.replies.receive(h.session, [req(3, 'wait')], []);
    await tick();
    h.peer.close(new McpError(ErrorCode.ConnectionClosed, 'Session ended'));
    h.replies.flush();
    expect(h.wire).toEqual([[{ jsonrpc: '2.0', id: 2, result: {} }]]);
    h.gates.get(1)!({});
    await tick();
    expect(h.wire).toHaveLength(1);
  });
});
