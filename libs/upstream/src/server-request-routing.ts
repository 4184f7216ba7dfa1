import { methodNotFound, type InboundContext, type JsonRpcPeer, type JsonRpcRequest } from '@switchboard/core';
import type { UpstreamConnection } from './upstream-connection.js';
import type { ServerRequestHandler } from './upstream.types.js';

/**
 * Answers a request an upstream sent the gateway: a ping at once, anything else (roots,
 * sampling, elicitation) by `handler`, told which of the gateway's requests on `peer` may
 * have caused it; -32601 when there is no handler.
 */
export function answerServerRequest(
  connection: UpstreamConnection,
  handler: ServerRequestHandler | undefined,
  peer: JsonRpcPeer | undefined,
  request: JsonRpcRequest,
  ctx: InboundContext,
): Promise<Record<string, unknown>> {
  if (request.method === 'ping') {
    // Answered at once and about no call: even on a call's own stream it is no sign that
    // the call is progressing, so its idle timeout is not started again.
    ctx.about?.([]);
    return Promise.resolve({});
  }
  if (!handler) return Promise.reject(methodNotFound(request.method));
  // What caused it: the request whose response stream carried it (Streamable HTTP), or,
  // when the transport cannot say (stdio), every request of ours still in flight here.
  const related = ctx.relatedRequestId === undefined ? undefined : peer?.originOf(ctx.relatedRequestId);
  const candidates = related !== undefined ? [related] : (peer?.pendingOrigins() ?? []);
  // Which of them it is about is the handler's to say (the one it relays it for).
  const attribute = (origins: unknown[]) => ctx.about?.(peer?.idsOf(origins) ?? []);
  return handler({ connection, request, signal: ctx.signal, related: related !== undefined, candidates, attribute });
}
