import type { Readable, Writable } from 'node:stream';
import { ErrorCode, LineSplitter, LineWriter, McpError, encodeBatch, encodeMessage, errorResponse, newSessionId, type JsonRpcMessage } from '@switchboard/core';
import { BatchReplies } from '../batch-reply.js';
import type { DownstreamDeps } from '../downstream.types.js';
import { GatewaySession } from '../gateway-session.js';
import { parseBody, takeMessages } from '../message-intake.js';
import type { AuthPrincipal } from '@switchboard/auth';
import { MAX_UNREAD_BYTES } from '../http/sse-stream.js';
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
    if (!this.output.writable) return done();
    this.output.write(text, () => done());
    this.holdInputWhileUnread();
  });
  /** stdin is not being read: the host left too much unread on stdout (holdInputWhileUnread). */
  private inputHeld = false;
  /** A batch's responses go back as one array (JSON-RPC 2.0). */
  private readonly batches = new BatchReplies((responses) => void this.writer.push(encodeBatch(responses)));

  constructor(
    private readonly deps: DownstreamDeps,
    private readonly input: Readable,
    private readonly output: Writable,
    /** Who the host is: the key's principal with SWITCHBOARD_API_KEY, else the user running this. */
    private readonly principal: AuthPrincipal = stdioPrincipal(),
  ) {}

  /** The one session's id, once run() has begun it: what its audit rows carry. */
  get sessionId(): string | undefined {
    return this.session?.id;
  }

  /** Resolves when the host goes away: stdin ends, or stdout can no longer be written. */
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
      const gone = () => {
        this.close();
        resolve();
      };
      this.input.once('end', gone);
      // A host that closed its end of stdout (or died) makes the next write fail with EPIPE.
      // Unhandled, that error ended the process with a stack trace and without cancelling
      // the calls in flight upstream; it is the host going away, as the end of stdin is.
      this.output.on('error', (err: NodeJS.ErrnoException) => {
        this.deps.logger.warn({ code: err.code }, 'stdout can no longer be written: the host went away');
        gone();
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
    const parsed = parseBody(line, 'line');
    if (!parsed.ok) return void this.write(parsed.error);
    const intake = takeMessages(parsed.value, session.protocolVersion || undefined);
    if (!intake.ok) return void this.write(intake.error);
    if (intake.batch) return this.batches.receive(session, intake.messages, intake.errors);
    for (const error of intake.errors) void this.write(error);
    for (const message of intake.messages) session.receive(message);
  }

  /**
   * Writes to a pipe queue in this process without bound, so a host that keeps sending
   * requests but stops reading stdout would have every answer held in memory (1.2 GB for
   * 200 answers of 1 MiB). Past MAX_UNREAD_BYTES unread, stdin is no longer read until
   * stdout drains: the host's own writes then block, as they would on any full pipe, and
   * nothing is lost. Answers to what was already read still go out (a long one whole).
   */
  private holdInputWhileUnread(): void {
    if (this.inputHeld || this.output.writableLength <= MAX_UNREAD_BYTES) return;
    this.inputHeld = true;
    this.input.pause();
    this.deps.logger.warn({ unreadBytes: this.output.writableLength }, 'the host is not reading stdout: stopped reading stdin until it does');
    const release = () => {
      this.output.off('drain', release);
      this.output.off('close', release);
      this.inputHeld = false;
      this.input.resume();
    };
    // A host that went away (the pipe closed) must not leave stdin unread: its end is how this process learns it.
    this.output.once('drain', release);
    this.output.once('close', release);
  }

  private write(message: JsonRpcMessage): Promise<void> {
    return this.writer.push(encodeMessage(message));
  }
}
