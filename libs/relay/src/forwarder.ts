import { Cancellation, withoutRelatedTask, type InboundContext, type JsonRpcRequest, type PeerRequestOptions } from '@switchboard/core';
import type { UpstreamConnection } from '@switchboard/upstream';
import { shapeUpstreamRequest } from './revision/shape-upstream-request.js';
import type { DownstreamSession } from './session.js';
import type { AuditFacts } from './audit/audit-facts.js';
import type { RelayOrigin } from './server-requests/relay-origin.js';
import type { UrlElicitations } from './server-requests/url-elicitations.js';

type Item = Record<string, unknown>;

/** Progress notifications of one relayed request passed on a second, at most (either way). */
export const MAX_PROGRESS_PER_SECOND = 20;

/**
 * For one request: whether the progress notification that arrives now may be passed on
 * (the spec has both sides rate limit progress, against flooding). What passes the bound
 * is dropped; the next second's first one goes through.
 */
export function progressRate(): () => boolean {
  let windowStart = 0;
  let passed = 0;
  return () => {
    const now = Date.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      passed = 0;
    }
    return passed++ < MAX_PROGRESS_PER_SECOND;
  };
}

/** How a request goes upstream when not as a plain request (Forwarder.forward's `how`). */
export interface ForwardHow {
  /** Sends it: a task-only tool's call (TaskCalls), a host's task-augmented call (TaskRelay). */
  send?: (params: Item, options: PeerRequestOptions) => Promise<Item>;
  /**
   * The upstream's progress params as the host may get them, as to the task they relate to
   * (`_meta["io.modelcontextprotocol/related-task"]`): by default without any, since the
   * upstream's task id is nothing a host could use (ADR 010) and names a task on a
   * connection other principals share; a relayed task's creation puts the gateway's id in.
   */
  relate?: (progress: Item) => Item;
}

/**
 * Sends one downstream request to its upstream: the host's progress token is replaced by one
 * the upstream connection owns (tokens from different hosts may clash) and mapped back on
 * every progress notification; what the upstream's revision lacks is left out
 * (shape-upstream-request.ts); the host's cancellation becomes notifications/cancelled
 * upstream; the per-request timeout is reset by progress, waits while the upstream's own
 * question about the request is pending, and is capped by a hard maximum. A -32042 answer
 * (URL elicitation required) goes back as it is, and its elicitations' completions will
 * follow it to the host. A call to a task-only tool runs as a task upstream (TaskCalls, in
 * @switchboard/upstream) with the same options: the task's progress, its questions and the
 * host's cancellation take these same ways.
 */
export class Forwarder {
  constructor(private readonly urlElicitations?: UrlElicitations) {}

  forward(
    session: DownstreamSession,
    request: JsonRpcRequest,
    connection: UpstreamConnection,
    params: Item,
    /** With the request's audit facts when it is recorded: its questions' rows join its trace. */
    ctx: InboundContext & { audit?: Pick<AuditFacts, 'traceId'> },
    /** How to send it, when not as a plain request: a task-only tool's call, a host's task. */
    how: ForwardHow = {},
  ): Promise<Item> {
    const meta = params._meta as Item | undefined;
    const hostToken = meta?.progressToken as string | number | undefined;
    let upstreamParams = shapeUpstreamRequest(request.method, params, connection.protocolVersion);
    if (hostToken !== undefined) {
      const { progressToken: _dropped, ...restMeta } = meta!;
      upstreamParams = { ...upstreamParams, _meta: restMeta };
      if (Object.keys(restMeta).length === 0) delete upstreamParams._meta;
    }
    const timeouts = connection.config.timeouts;
    // The origin routes the upstream's own questions (sampling, elicitation) back to this host.
    // They are withdrawn when the host cancels, and also when the call ends (timed out, say):
    // nobody is left to use the answer.
    // A Cancellation, not an AbortController: every forwarded call makes one, and aborts it.
    const ended = new Cancellation();
    const endQuestions = () => ended.abort();
    ctx.signal.addEventListener('abort', endQuestions, { once: true });
    const origin: RelayOrigin = { session, requestId: request.id, signal: ended, ...(ctx.audit?.traceId && { traceId: ctx.audit.traceId }) };
    const options: PeerRequestOptions = {
      timeoutMs: timeouts.requestMs,
      maxTotalMs: timeouts.maxRequestMs,
      // A question it asks (an elicitation waiting in the inbox, say) has relay.timeoutMs.
      waitWhileAsked: true,
      signal: ctx.signal,
      origin,
    };
    if (hostToken !== undefined) {
      // Progress relayed to the host is rate limited (the spec: both sides SHOULD, against
      // flooding): an upstream sending thousands a second reached the host as thousands a
      // second. What passes the bound is dropped; the upstream's timeout is still reset by
      // every one (the peer's), and the result says how it ended.
      const withinRate = progressRate();
      const relate = how.relate ?? withoutRelatedTask;
      options.onProgress = (progress) => {
        if (!withinRate()) return;
        void session
          .send(
            { jsonrpc: '2.0', method: 'notifications/progress', params: { ...relate(progress), progressToken: hostToken } },
            { relatedRequestId: request.id },
          )
          .catch(() => undefined);
      };
    }
    // A task-only tool's call runs as a task upstream; the host waits for its result as for any call.
    // A task-augmented one from a host the gateway relays tasks for is answered with the task (ADR 012).
    const sent = how.send ? how.send(upstreamParams, options) : connection.request(request.method, upstreamParams, options);
    return sent
      .catch((err: unknown) => {
        this.urlElicitations?.failed(session, connection, err);
        throw err;
      })
      .finally(() => {
        ctx.signal.removeEventListener('abort', endQuestions);
        endQuestions();
      });
  }
}
