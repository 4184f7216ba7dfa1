import type { IncomingMessage, ServerResponse } from 'node:http';
import { isSameCaller, renewCredential, type AuthPrincipal } from '@switchboard/auth';
import { ErrorCode, McpError, callerKey, encodeBatch, encodeMessage, newSessionId, type JsonRpcMessage, type SendOptions } from '@switchboard/core';
import { BatchReplies } from '../batch-reply.js';
import type { DownstreamDeps } from '../downstream.types.js';
import { GatewaySession } from '../gateway-session.js';
import { takeMessages } from '../message-intake.js';
import { answerPreflight, applyCors } from './cors.js';
import { startCredentialCheck } from './credential-check.js';
import { accepts } from './accept-header.js';
import { replyError, replyJson } from './http-replies.js';
import { readJsonPost } from './read-body.js';
import { admitted, authenticated, requestLine } from './request-guard.js';
import { SseStream } from './sse-stream.js';

interface LegacySession {
  session: GatewaySession;
  stream: SseStream;
  /** A batch's responses go back as one array (JSON-RPC 2.0), in one event. */
  batches: BatchReplies;
  /** Whose session it is, as `byCaller` counts it. */
  caller: string;
}

/**
 * The deprecated HTTP+SSE transport (2024-11-05) for older hosts: GET /sse opens the stream
 * and names the POST endpoint in an `endpoint` event; every message to the host, responses
 * included, travels on that stream; POST /messages?sessionId=… answers 202.
 */
export class LegacySseService {
  private readonly sessions = new Map<string, LegacySession>();
  /** How many sessions each caller holds, for `rateLimits.sessionsPerPrincipal`. */
  private readonly byCaller = new Map<string, number>();
  private stopCredentialCheck = (): void => undefined;

  constructor(private readonly deps: DownstreamDeps) {}

  /** Ends, within CREDENTIAL_CHECK_MS, a session whose key is revoked or token expired, and its stream. */
  startCredentialCheck(): void {
    this.stopCredentialCheck = startCredentialCheck(this.deps, this.sessions, (id) => this.remove(id));
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  async open(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!admitted(req, res, this.deps.config(), this.deps.onRefused)) return;
    applyCors(req, res);
    if (req.method === 'OPTIONS') return answerPreflight(res, 'GET');
    if (req.method !== 'GET') return replyError(res, 405, ErrorCode.InvalidRequest, 'Method not allowed', null, { Allow: 'GET' });
    const principal = await authenticated(req, res, this.deps.authenticate, this.deps.onRefused);
    if (!principal) return;
    if (!accepts(req.headers.accept ?? 'text/event-stream', 'text/event-stream')) {
      return replyError(res, 406, ErrorCode.InvalidRequest, 'Not Acceptable: accept text/event-stream');
    }
    const caller = callerKey(principal);
    if (!this.roomForSession(req, principal, caller)) {
      return replyError(res, 429, ErrorCode.RateLimited, 'Too many sessions: close one of the SSE streams this caller holds before opening another');
    }
    const id = newSessionId();
    // Closing a stream the host stopped reading ends the session (below), as a hang-up does.
    const stream = new SseStream(res, {}, (unreadBytes) =>
      this.deps.logger.warn({ session: id, unreadBytes }, 'closed an SSE stream its host stopped reading'),
    );
    const batches = new BatchReplies((responses) => void stream.write('message', encodeBatch(responses)));
    const channel = async (message: JsonRpcMessage, options?: SendOptions) => {
      if (!batches.hold(message, options)) stream.write('message', encodeMessage(message));
    };
    const session = new GatewaySession(id, 'sse', channel, this.deps.dispatcher, this.deps.logger, principal);
    session.onRequestCancelled = (requestId) => batches.cancelled(requestId);
    this.sessions.set(id, { session, stream, batches, caller });
    this.byCaller.set(caller, (this.byCaller.get(caller) ?? 0) + 1);
    this.deps.sessions.add(session);
    stream.onClose(() => this.remove(id));
    stream.write('endpoint', `/messages?sessionId=${id}`);
  }

  async message(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!admitted(req, res, this.deps.config(), this.deps.onRefused)) return;
    applyCors(req, res);
    if (req.method === 'OPTIONS') return answerPreflight(res, 'POST');
    if (req.method !== 'POST') return replyError(res, 405, ErrorCode.InvalidRequest, 'Method not allowed', null, { Allow: 'POST' });
    const principal = await authenticated(req, res, this.deps.authenticate, this.deps.onRefused);
    if (!principal) return;
    const id = new URL(req.url ?? '', 'http://x').searchParams.get('sessionId');
    if (!id) return replyError(res, 400, ErrorCode.InvalidRequest, 'Bad Request: sessionId query parameter is required');
    const state = this.sessions.get(id);
    // Another caller's session is as good as none (see StreamableHttpService.existing).
    if (!state || !isSameCaller(state.session.principal, principal)) {
      return replyError(res, 404, ErrorCode.ConnectionClosed, 'Session not found');
    }
    renewCredential(state.session.principal, principal);
    const body = await readJsonPost(req, res, this.deps.maxBodyBytes);
    if (!body) return;
    const intake = takeMessages(body.value, state.session.protocolVersion || undefined);
    if (!intake.ok) return replyJson(res, 400, intake.error);
    res.writeHead(202, { 'Content-Type': 'text/plain' }).end('Accepted');
    if (intake.batch) return state.batches.receive(state.session, intake.messages, intake.errors);
    for (const error of intake.errors) state.stream.write('message', encodeMessage(error));
    for (const m of intake.messages) state.session.receive(m);
  }

  closeAll(): void {
    this.stopCredentialCheck();
    for (const id of [...this.sessions.keys()]) this.remove(id);
  }

  /**
   * Whether the caller may open one more session. Each one is an open stream, held until its
   * host hangs up, so none is idle enough to end for room (as Streamable HTTP does): at the
   * limit the new one is refused, and one credential cannot hold connections without bound.
   */
  private roomForSession(req: IncomingMessage, principal: AuthPrincipal, caller: string): boolean {
    const held = this.byCaller.get(caller) ?? 0;
    const limit = this.deps.config().rateLimits.sessionsPerPrincipal;
    if (held < limit) return true;
    this.deps.onRefused?.({
      ...requestLine(req),
      decision: 'limited',
      rule: 'limit:sessions',
      reason: `${held} HTTP+SSE sessions open (rateLimits.sessionsPerPrincipal is ${limit})`,
      principal: { id: principal.id, authMethod: principal.authMethod },
    });
    return false;
  }

  private remove(id: string): void {
    const state = this.sessions.get(id);
    if (!state) return;
    this.sessions.delete(id);
    const held = (this.byCaller.get(state.caller) ?? 1) - 1;
    if (held > 0) this.byCaller.set(state.caller, held);
    else this.byCaller.delete(state.caller);
    // Requests still running get no response (the peer closes under them): a batch goes with
    // the ones it has, if the stream is still there to carry it (shutdown).
    state.batches.flush();
    state.stream.end();
    state.session.peer.close(new McpError(ErrorCode.ConnectionClosed, 'Session ended'));
    this.deps.sessions.remove(id);
  }
}
