import type { Readable, Writable } from 'node:stream';
import { ErrorCode, LineSplitter, LineWriter, McpError, encodeBatch, encodeMessage, errorResponse, newSessionId, type JsonRpcMessage } from '@switchboard/core';
import { BatchReplies } from '../batch-reply.js';
import type { DownstreamDeps } from '../downstream.types.js';
import { GatewaySession } from '../gateway-session.js';
import { parseBody, takeMessages } from '../message-intake.js';
import type { AuthPrincipal } from '@switchboard/auth';
import { stdioPrincipal } from '../principals.js';

/**
 * `switchboard stdio`: one session on stdin/stdout, newline-delimited JSON, for hosts that
 * launch MCP servers as subprocesses. Nothing but protocol messages is written to stdout.
 */
export class StdioFront {
  private session?: GatewaySession;
  private lines?: LineSplitter;
  private readonly writer = new LineWriter((text, done) => {
    // A host that closed its end gets nothing more; the write "succeeds" so nothing waits.
    if (this.output.writable) this.output.write(text, () => done());
    else done();
  });
  /** A batch's responses go back as one array (JSON-RPC 2.0). */
  private readonly batches = new BatchReplies((responses) => void this.writer.push(encodeBatch(responses)));

  constructor(
    private readonly deps: DownstreamDeps,
    private readonly input: Readable,
    private readonly output: Writable,
    /** Who the host is: the key's principal with SWITCHBOARD_API_KEY, else the user running this. */
    private readonly principal: AuthPrincipal = stdioPrincipal(),
  ) {}

  /** Resolves when stdin ends (the host went away). */
  run(): Promise<void> {
    // A line past the limit is refused like an HTTP body past it, and dropped up to its
    // newline: a host that never ends a line cannot grow this process without bound.
    this.lines = new LineSplitter({
      maxLength: this.deps.maxBodyBytes,
      onOverflow: () => void this.write(errorResponse(null, { code: ErrorCode.InvalidRequest, message: `Request too large (the limit is ${this.deps.maxBodyBytes} characters)` })),
    });
    const session = new GatewaySession(
      newSessionId(),
      'stdio',
      (message, options) => (this.batches.hold(message, options) ? Promise.resolve() : this.write(message)),
      this.deps.dispatcher,
      this.deps.logger,
      this.principal,
    );
    session.onRequestCancelled = (id) => this.batches.cancelled(id);
    this.session = session;
    this.deps.sessions.add(session);
    this.input.setEncoding('utf8');
    this.input.on('data', (chunk: string) => this.onData(chunk));
    return new Promise((resolve) => {
      this.input.once('end', () => {
        this.close();
        resolve();
      });
    });
  }

  close(): void {
    const session = this.session;
    if (!session) return;
    this.session = undefined;
    session.peer.close(new McpError(ErrorCode.ConnectionClosed, 'Session ended'));
    // Requests still running get no response now; a batch goes with the ones it has.
    this.batches.flush();
    this.deps.sessions.remove(session.id);
  }

  private onData(chunk: string): void {
    this.lines?.push(chunk, (line) => this.onLine(line));
  }

  private onLine(line: string): void {
    const session = this.session;
    if (!session) return;
    const parsed = parseBody(line);
    if (!parsed.ok) return void this.write(parsed.error);
    const intake = takeMessages(parsed.value, session.protocolVersion || undefined);
    if (!intake.ok) return void this.write(intake.error);
    if (intake.batch) return this.batches.receive(session, intake.messages, intake.errors);
    for (const error of intake.errors) void this.write(error);
    for (const message of intake.messages) session.receive(message);
  }

  private write(message: JsonRpcMessage): Promise<void> {
    return this.writer.push(encodeMessage(message));
  }
}
