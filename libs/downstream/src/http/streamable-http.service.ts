import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  callerKey,
  ErrorCode,
  McpError,
  duplicateIdMessage,
  encodeMessage,
  errorResponse,
  isRequest,
  isResponse,
  isSupportedVersion,
  newSessionId,
  type JsonRpcErrorResponse,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type RequestId,
  type SendOptions,
  counted,
} from '@switchboard/core';
import { isInitializeRequest, requestIdOf, takeMessages } from '../message-intake.js';
import { GatewaySession } from '../gateway-session.js';
import type { DownstreamDeps } from '../downstream.types.js';
import { answerPreflight, applyCors } from './cors.js';
import { startCredentialCheck } from './credential-check.js';
import { accepts } from './accept-header.js';
import { headerOf, replyError, replyJson } from './http-replies.js';
import { PostExchange } from './post-exchange.js';
import { readJsonPost } from './read-body.js';
import { modernRevisionClaimed, unsupportedRevision } from './modern-request.js';
import { admitted, authenticated, requestLine } from './request-guard.js';
import { SseStream } from './sse-stream.js';
import { isSameCaller, renewCredential, type AuthPrincipal } from '@switchboard/auth';

interface HttpSession {
  session: GatewaySession;
  /** Open POST answers, by the id of each request they carry. */
  exchanges: Map<RequestId, PostExchange>;
  /** The GET stream, for messages not tied to a request. */
  standalone?: SseStream;
}

const ALLOWED = 'GET, POST, DELETE';

/**
 * The Streamable HTTP transport at /mcp (spec 2025-03-26 and later): POST carries messages,
 * GET opens the server's stream, DELETE ends the session. Transport rules live here; what
 * the messages mean is the dispatcher's business.
 */
export class StreamableHttpService {
  private readonly sessions = new Map<string, HttpSession>();
  /**
   * Each caller's sessions, for `rateLimits.sessionsPerPrincipal`: an index, so that an
   * initialize costs the same however many sessions other callers hold.
   */
  private readonly byCaller = new Map<string, Set<HttpSession>>();
  private sweeper?: NodeJS.Timeout;
  private stopCredentialCheck = (): void => undefined;

  constructor(private readonly deps: DownstreamDeps) {}

  /**
   * Hosts often go away without DELETE. A session with no traffic, no open stream and no
   * request in flight for `timeouts.sessionIdleMs` is ended; its host gets 404 next time
   * and initializes again, as the spec prescribes.
   */
  startIdleSweep(): void {
    const every = Math.min(60_000, Math.max(100, Math.floor(this.deps.config().timeouts.sessionIdleMs / 2)));
    this.sweeper = setInterval(() => this.sweepIdle(), every);
    this.sweeper.unref();
    this.stopCredentialCheck = startCredentialCheck(this.deps, this.sessions, (id) => this.remove(id));
  }

  private sweepIdle(): void {
    const cutoff = Date.now() - this.deps.config().timeouts.sessionIdleMs;
    for (const [id, state] of this.sessions) {
      if (isIdle(state) && state.session.lastActivity < cutoff) this.remove(id);
    }
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!admitted(req, res, this.deps.config(), this.deps.onRefused)) return;
    applyCors(req, res);
    // A CORS preflight carries no credentials: it is answered before authentication.
    if (req.method === 'OPTIONS') return answerPreflight(res, ALLOWED);
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
      return replyError(res, 405, ErrorCode.InvalidRequest, 'Method not allowed', null, { Allow: ALLOWED });
    }
    const principal = await authenticated(req, res, this.deps.authenticate, this.deps.onRefused);
    if (!principal) return;
    if (req.method === 'POST') return this.post(req, res, principal);
    if (req.method === 'GET') return this.get(req, res, principal);
    return this.delete(req, res, principal);
  }

  /** Ends every session (shutdown). */
  closeAll(): void {
    clearInterval(this.sweeper);
    this.stopCredentialCheck();
    for (const id of [...this.sessions.keys()]) this.remove(id);
  }

  private async post(req: IncomingMessage, res: ServerResponse, principal: AuthPrincipal): Promise<void> {
    if (!accepts(req.headers.accept, 'application/json') || !accepts(req.headers.accept, 'text/event-stream')) {
      return replyError(res, 406, ErrorCode.InvalidRequest, 'Not Acceptable: accept both application/json and text/event-stream');
    }
    const body = await readJsonPost(req, res, this.deps.maxBodyBytes);
    if (!body) return;
    // The body is read: a refusal of all of it names the request it refuses, when it is one.
    const refusedId = requestIdOf(body.value);

    // A session is created only for a valid initialize request, so that nothing else (an
    // invalid message, an initialize notification) leaves one behind.
    const initializing = isInitializeRequest(body.value);
    if (initializing && this.ownedSession(req, principal)) {
      return replyError(res, 400, ErrorCode.InvalidRequest, 'Bad Request: this session is already initialized; initialize without Mcp-Session-Id to start a new one', refusedId);
    }
    // Without a session, say what is wrong with the message rather than ask for a session id:
    // a malformed initialize would otherwise only hear that it lacks one.
    const sessionless = headerOf(req.headers['mcp-session-id']) === undefined;
    if (sessionless && Array.isArray(body.value) && body.value.some(isInitializeRequest)) {
      return replyError(res, 400, ErrorCode.InvalidRequest, 'Invalid request: initialize cannot be batched');
    }
    if (sessionless && !initializing) {
      const intake = takeMessages(body.value, undefined);
      if (!intake.ok) return replyJson(res, 400, intake.error);
      if (intake.messages.length === 0) return replyJson(res, 400, intake.errors[0]);
      const modern = modernRevisionClaimed(req, body.value);
      if (modern !== undefined) return replyJson(res, 400, errorResponse(refusedId, unsupportedRevision(modern)));
    }
    if (initializing && !this.roomForSession(req, principal)) {
      return replyError(res, 429, ErrorCode.RateLimited, 'Too many sessions: every session this caller holds is in use; end one (DELETE) before initializing another', refusedId);
    }
    const state = initializing ? this.create(principal) : this.existing(req, res, principal, refusedId);
    if (!state) return;

    const intake = takeMessages(body.value, state.session.protocolVersion || undefined);
    if (!intake.ok) return replyJson(res, 400, intake.error);
    const { requests, refused } = this.admitIds(state, intake.messages.filter(isRequest));
    // Nearly always nothing is refused (every tools/call comes through here): the intake's
    // own lists then serve as they are.
    const errors = refused.length === 0 ? intake.errors : [...intake.errors, ...refused];
    const accepted = refused.length === 0 ? intake.messages : intake.messages.filter((m) => !isRequest(m) || requests.includes(m));
    if (requests.length === 0) {
      for (const m of accepted) state.session.receive(m);
      if (errors.length === 0) {
        res.writeHead(202).end();
        return;
      }
      return replyJson(res, 400, intake.batch ? errors : errors[0]);
    }

    const headers: Record<string, string> = initializing ? { 'Mcp-Session-Id': state.session.id } : {};
    const exchange = new PostExchange(res, requests.map((r) => r.id), intake.batch, headers, errors);
    for (const r of requests) state.exchanges.set(r.id, exchange);
    // A dropped connection is not a cancellation (spec); only the routing of its answers goes.
    res.once('close', () => {
      for (const id of exchange.ids) if (state.exchanges.get(id) === exchange) state.exchanges.delete(id);
    });
    for (const m of accepted) state.session.receive(m);
  }

  /**
   * Splits requests into those that may run and error answers for those whose id is taken:
   * by a request of this session still running (its answer would go to the wrong POST, and
   * the first POST would never get one) or by an earlier request in the same batch.
   */
  private admitIds(state: HttpSession, requests: JsonRpcRequest[]): { requests: JsonRpcRequest[]; refused: JsonRpcErrorResponse[] } {
    const admitted: JsonRpcRequest[] = [];
    const refused: JsonRpcErrorResponse[] = [];
    const seen = new Set<RequestId>();
    for (const r of requests) {
      if (seen.has(r.id) || state.exchanges.has(r.id) || state.session.peer.isHandling(r.id)) {
        refused.push(errorResponse(r.id, { code: ErrorCode.InvalidRequest, message: duplicateIdMessage(r.id) }));
      } else {
        seen.add(r.id);
        admitted.push(r);
      }
    }
    return { requests: admitted, refused };
  }

  private get(req: IncomingMessage, res: ServerResponse, principal: AuthPrincipal): void {
    if (!accepts(req.headers.accept, 'text/event-stream')) {
      return replyError(res, 406, ErrorCode.InvalidRequest, 'Not Acceptable: accept text/event-stream');
    }
    const state = this.existing(req, res, principal);
    if (!state) return;
    if (openStream(state)) {
      return replyError(res, 409, ErrorCode.InvalidRequest, 'Conflict: this session already has a GET stream');
    }
    const stream = new SseStream(res, {}, (unreadBytes) =>
      this.deps.logger.warn({ session: state.session.id, unreadBytes }, 'closed a GET stream its host stopped reading'),
    );
    state.standalone = stream;
    stream.onClose(() => {
      if (state.standalone === stream) state.standalone = undefined;
      // Idle time counts from when the host stopped listening.
      state.session.lastActivity = Date.now();
    });
  }

  private delete(req: IncomingMessage, res: ServerResponse, principal: AuthPrincipal): void {
    const state = this.existing(req, res, principal);
    if (!state) return;
    this.remove(state.session.id);
    res.writeHead(200).end();
  }

  /** The session the request's Mcp-Session-Id names, if it is the principal's own. */
  private ownedSession(req: IncomingMessage, principal: AuthPrincipal): HttpSession | undefined {
    const id = headerOf(req.headers['mcp-session-id']);
    const state = id === undefined ? undefined : this.sessions.get(id);
    return state && isSameCaller(state.session.principal, principal) ? state : undefined;
  }

  /**
   * The session named by the request's headers, or an error answer (400/404, carrying
   * `refusedId`: the POSTed request's id) and undefined.
   * A session belongs to the principal that initialized it, with its roles and groups then
   * (isSameCaller): anybody else is told it does not exist, so a leaked session id is worth
   * nothing without its owner's credential.
   */
  private existing(req: IncomingMessage, res: ServerResponse, principal: AuthPrincipal, refusedId: RequestId | null = null): HttpSession | undefined {
    const id = headerOf(req.headers['mcp-session-id']);
    if (!id) {
      replyError(res, 400, ErrorCode.InvalidRequest, 'Bad Request: Mcp-Session-Id header is required', refusedId);
      return undefined;
    }
    const state = this.sessions.get(id);
    if (!state || !isSameCaller(state.session.principal, principal)) {
      replyError(res, 404, ErrorCode.ConnectionClosed, 'Session not found: initialize a new session', refusedId);
      return undefined;
    }
    renewCredential(state.session.principal, principal);
    // Only a value that is no revision we speak is refused (the spec's MUST). Another spoken
    // revision than the session's passes, and the session's still shapes the answers: sending
    // the negotiated one is a SHOULD on the client, and the conformance suite sends 2025-03-26
    // on sessions that negotiated 2025-11-25.
    const version = headerOf(req.headers['mcp-protocol-version']);
    if (version !== undefined && !isSupportedVersion(version)) {
      replyError(res, 400, ErrorCode.InvalidRequest, `Bad Request: unsupported MCP-Protocol-Version '${version}'`, refusedId);
      return undefined;
    }
    return state;
  }

  /**
   * Whether the caller may open one more session. At its limit the caller's longest-idle
   * session (no request in flight, no GET stream) is ended to make room: hosts that never
   * send DELETE are common, and their leftovers should not lock their owner out. Only the
   * caller's own sessions are counted or ended, so one credential cannot crowd out others.
   */
  private roomForSession(req: IncomingMessage, principal: AuthPrincipal): boolean {
    const own = this.byCaller.get(callerKey(principal));
    const limit = this.deps.config().rateLimits.sessionsPerPrincipal;
    if (!own || own.size < limit) return true;
    let idlest: HttpSession | undefined;
    for (const state of own) {
      if (isIdle(state) && (!idlest || state.session.lastActivity < idlest.session.lastActivity)) idlest = state;
    }
    if (idlest) {
      this.deps.logger.info({ session: idlest.session.id, principal: principal.id, limit }, "ended a caller's longest-idle session: it reached rateLimits.sessionsPerPrincipal");
      this.remove(idlest.session.id);
      return true;
    }
    this.deps.onRefused?.({
      ...requestLine(req),
      decision: 'limited',
      rule: 'limit:sessions',
      reason: `${counted(own.size, 'session')}, each busy (rateLimits.sessionsPerPrincipal is ${limit})`,
      principal: { id: principal.id, authMethod: principal.authMethod },
    });
    return false;
  }

  private create(principal: AuthPrincipal): HttpSession {
    const id = newSessionId();
    const exchanges = new Map<RequestId, PostExchange>();
    const state: HttpSession = { exchanges } as HttpSession;
    const channel = async (message: JsonRpcMessage, options?: SendOptions) => this.route(state, message, options);
    state.session = new GatewaySession(id, 'streamable-http', channel, this.deps.dispatcher, this.deps.logger, principal);
    state.session.canReach = (related) => this.streamFor(state, related) !== undefined;
    state.session.onRequestCancelled = (requestId) => {
      const exchange = state.exchanges.get(requestId);
      state.exchanges.delete(requestId);
      exchange?.cancelled(requestId);
    };
    this.sessions.set(id, state);
    const key = callerKey(principal);
    const own = this.byCaller.get(key) ?? new Set<HttpSession>();
    this.byCaller.set(key, own.add(state));
    this.deps.sessions.add(state.session);
    return state;
  }

  /** Where a message for the host goes now: its request's POST answer while open, else the GET stream, else nowhere. */
  private streamFor(state: HttpSession, related: RequestId | undefined): PostExchange | SseStream | undefined {
    const exchange = related === undefined ? undefined : state.exchanges.get(related);
    if (exchange && !exchange.done) return exchange;
    return openStream(state);
  }

  private route(state: HttpSession, message: JsonRpcMessage, options?: SendOptions): void {
    const related = options?.relatedRequestId;
    const exchange = related === undefined ? undefined : state.exchanges.get(related);
    if (exchange) {
      if (isResponse(message)) state.exchanges.delete(related!);
      // A failed initialize leaves nothing worth keeping, and its answer names no session.
      if (isResponse(message) && 'error' in message && !state.session.protocolVersion) {
        exchange.withoutHeader('Mcp-Session-Id');
        exchange.deliver(message);
        this.remove(state.session.id);
        return;
      }
      exchange.deliver(message);
      return;
    }
    if (isResponse(message)) return; // its POST went away; the spec has no other place for it
    const stream = openStream(state);
    if (stream) {
      stream.write('message', encodeMessage(message));
      return;
    }
    // The host opened no GET stream (optional in the spec). A notification that belongs to no
    // request is then not for it; a request of ours would wait for an answer that cannot
    // come, so its sender is told at once (the relay asks canReach first; this is the race).
    if (isRequest(message)) {
      this.deps.logger.warn({ session: state.session.id, method: message.method }, 'no stream open to the host for a request to it');
      throw new McpError(ErrorCode.ConnectionClosed, 'The host has no open stream to receive this request');
    }
  }

  private remove(id: string): void {
    const state = this.sessions.get(id);
    if (!state) return;
    this.sessions.delete(id);
    const key = callerKey(state.session.principal);
    const own = this.byCaller.get(key);
    if (own?.delete(state) && own.size === 0) this.byCaller.delete(key);
    state.standalone?.end();
    // Requests still in flight are aborted below and would never be answered: say why.
    const told = { code: ErrorCode.ConnectionClosed, message: 'Session ended before the request completed' };
    for (const exchange of new Set(state.exchanges.values())) exchange.failRemaining(told);
    state.exchanges.clear();
    // Their audit rows record the -32000 their hosts got from failRemaining.
    state.session.peer.close(new McpError(ErrorCode.ConnectionClosed, 'Session ended'), { told });
    this.deps.sessions.remove(id);
  }
}

/** The session's GET stream, while it is open. */
function openStream(state: HttpSession): SseStream | undefined {
  return state.standalone && !state.standalone.closed ? state.standalone : undefined;
}

/** No request in flight and no GET stream: what the idle sweep and the session limit may end. */
function isIdle(state: HttpSession): boolean {
  return state.exchanges.size === 0 && openStream(state) === undefined;
}
