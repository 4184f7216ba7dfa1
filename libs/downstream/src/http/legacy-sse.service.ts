import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, McpError, encodeMessage, newSessionId } from '@switchboard/core';
import type { DownstreamDeps } from '../downstream.types.js';
import { GatewaySession } from '../gateway-session.js';
import { takeMessages } from '../message-intake.js';
import { answerPreflight, applyCors } from './cors.js';
import { accepts, replyError, replyJson } from './http-replies.js';
import { readJsonPost } from './read-body.js';
import { admitted, authenticated } from './request-guard.js';
import { SseStream } from './sse-stream.js';

interface LegacySession {
  session: GatewaySession;
  stream: SseStream;
}

/**
 * The deprecated HTTP+SSE transport (2024-11-05) for older hosts: GET /sse opens the stream
 * and names the POST endpoint in an `endpoint` event; every message to the host, responses
 * included, travels on that stream; POST /messages?sessionId=… answers 202.
 */
export class LegacySseService {
  private readonly sessions = new Map<string, LegacySession>();

  constructor(private readonly deps: DownstreamDeps) {}

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
    const id = newSessionId();
    const stream = new SseStream(res);
    const session = new GatewaySession(
      id,
      'sse',
      async (message) => void stream.write('message', encodeMessage(message)),
      this.deps.dispatcher,
      this.deps.logger,
      principal,
    );
    this.sessions.set(id, { session, stream });
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
    // Another principal's session is as good as none (see StreamableHttpService.existing).
    if (!state || state.session.principal.id !== principal.id) {
      return replyError(res, 404, ErrorCode.ConnectionClosed, 'Session not found');
    }
    const body = await readJsonPost(req, res, this.deps.maxBodyBytes);
    if (!body) return;
    const intake = takeMessages(body.value, state.session.protocolVersion || undefined);
    if (!intake.ok) return replyJson(res, 400, intake.error);
    res.writeHead(202, { 'Content-Type': 'text/plain' }).end('Accepted');
    for (const error of intake.errors) state.stream.write('message', encodeMessage(error));
    for (const m of intake.messages) state.session.receive(m);
  }

  closeAll(): void {
    for (const id of [...this.sessions.keys()]) this.remove(id);
  }

  private remove(id: string): void {
    const state = this.sessions.get(id);
    if (!state) return;
    this.sessions.delete(id);
    state.stream.end();
    state.session.peer.close(new McpError(ErrorCode.ConnectionClosed, 'Session ended'));
    this.deps.sessions.remove(id);
  }
}
