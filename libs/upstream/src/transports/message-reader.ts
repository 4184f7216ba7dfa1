import {
  classifyMessage,
  counted,
  invalidRequestAnswer,
  invalidResponseAsError,
  type JsonRpcErrorResponse,
  type JsonRpcMessage,
  type MessageExtra,
} from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import { LogBudget, MAX_STRAY_LINES_PER_SECOND } from '../log-budget.js';

export interface MessageReaderDeps {
  logger: Logger;
  /** Hides secrets in what is logged of something that is no message (the audit log's redactor). */
  redactText: (text: string) => string;
  /** Sends the answer owed to a request in a shape JSON-RPC does not allow. */
  answer: (refusal: JsonRpcErrorResponse) => void;
  /** One message, checked; `json` is its own text when it was the whole of what was read. */
  deliver: (message: JsonRpcMessage, json: string | undefined, extra: MessageExtra | undefined) => void;
}

/**
 * Reads the JSON text an HTTP upstream sends (an SSE event's data, a POST answer's body) the
 * way both HTTP transports must: a message or a batch of them (taken one by one, whatever the
 * revision), each checked as JSON-RPC. What is no message is logged, redacted and at most 100
 * a second (as a stdio upstream's stray lines); an answer in the wrong shape still ends its
 * request as an error, and a request in the wrong shape is answered, so neither side waits
 * for a timeout.
 */
export class UpstreamMessageReader {
  private readonly stray: LogBudget;

  constructor(private readonly deps: MessageReaderDeps) {
    this.stray = new LogBudget(
      deps.logger,
      MAX_STRAY_LINES_PER_SECOND,
      (count) => `upstream messages: ${counted(count, 'stray message')} not logged (over ${MAX_STRAY_LINES_PER_SECOND} a second)`,
    );
  }

  /**
   * It runs inside a response's 'data' or 'end' handler, where an exception would be uncaught
   * and end the daemon: what handling a message throws is logged instead.
   */
  read(json: string, extra?: MessageExtra): void {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      if (this.stray.take()) this.deps.logger.warn({ data: this.loggable(json) }, 'upstream sent something that is not JSON');
      return;
    }
    // Each item of a batch on its own, so one that fails to be handled loses none after it.
    const batch = Array.isArray(value);
    for (const item of batch ? (value as unknown[]) : [value]) {
      try {
        this.take(item, batch ? undefined : json, json, extra);
      } catch (err) {
        this.deps.logger.error({ err }, 'handling a message from the upstream failed');
      }
    }
  }

  /** Says what it left out of the log, when the connection ends. */
  stop(): void {
    this.stray.stop();
  }

  /** One message; `own`: its own text when it was the whole read, `read`: the whole read. */
  private take(value: unknown, own: string | undefined, read: string, extra: MessageExtra | undefined): void {
    if (classifyMessage(value) !== 'invalid') return this.deps.deliver(value as JsonRpcMessage, own, extra);
    // Answered and failed before anything is logged, so that logging (which stringifies it)
    // can never leave the upstream or the call waiting for a timeout.
    // A request in the wrong shape is answered, so the upstream does not wait on it.
    const refusal = invalidRequestAnswer(value);
    if (refusal) this.deps.answer(refusal);
    // An answer in the wrong shape still ends its request, as an error, rather than leave it to time out.
    const asError = invalidResponseAsError(value);
    if (asError) this.deps.deliver(asError, undefined, extra);
    if (this.stray.take()) {
      this.deps.logger.warn({ message: this.loggable(textOf(value, read)) }, 'upstream sent something that is not a JSON-RPC message');
    }
  }

  /**
   * What is logged of something that is no message: its start, redacted. Redacted before it
   * is cut, so a secret cut at the end is not left half there: a malformed answer often
   * carries what the call was given (an echoed token, say).
   */
  private loggable(text: string): string {
    return this.deps.redactText(text.slice(0, 800)).slice(0, 200);
  }
}

/**
 * The text of one value of a read, to log. JSON.stringify recurses, so a value nested deeply
 * enough (some 100,000 levels, which JSON.parse reads) throws RangeError: then the read's own
 * text stands for it.
 */
function textOf(value: unknown, read: string): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return read;
  }
}
