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
  /** Sends to the upstream: the answer owed to a request in a shape JSON-RPC does not allow. */
  send: (refusal: JsonRpcErrorResponse) => Promise<void>;
  /** One message, checked; `json` is its own text when it was the whole of what was read. */
  deliver: (message: JsonRpcMessage, json: string | undefined, extra: MessageExtra | undefined) => void;
  /** How strays are logged; an HTTP upstream's (HTTP_STRAYS) unless given. */
  strays?: StrayLogging;
}

/**
 * How what is no message is logged. A stdio upstream's log lines predate the reader and stay
 * as they were (operators search for them), so they differ from an HTTP upstream's.
 */
export interface StrayLogging {
  /** The log field and message of a read that is no JSON. */
  notJson: { field: string; message: string };
  /** The log field and message of a value that is no JSON-RPC message. */
  notMessage: { field: string; message: string };
  /** The log line for the strays a second left out. */
  skipped: (count: number) => string;
  /** What is logged of a stray value is the whole read (a stdio line), not the value alone. */
  logWholeRead: boolean;
  /** An empty batch is a stray (a stdio line `[]`), rather than a read of no messages. */
  emptyBatchIsStray: boolean;
}

export const HTTP_STRAYS: StrayLogging = {
  notJson: { field: 'data', message: 'upstream sent something that is not JSON' },
  notMessage: { field: 'message', message: 'upstream sent something that is not a JSON-RPC message' },
  skipped: (count) => `upstream messages: ${counted(count, 'stray message')} not logged (over ${MAX_STRAY_LINES_PER_SECOND} a second)`,
  logWholeRead: false,
  emptyBatchIsStray: false,
};

/**
 * Reads the JSON text an upstream sends (an SSE event's data, a POST answer's body, a stdio line) the
 * way every transport must: a message or a batch of them (taken one by one, whatever the
 * revision), each checked as JSON-RPC. What is no message is logged, redacted and at most 100
 * a second (as a stdio upstream's stray lines); an answer in the wrong shape still ends its
 * request as an error, and a request in the wrong shape is answered, so neither side waits
 * for a timeout.
 */
export class UpstreamMessageReader {
  private readonly stray: LogBudget;
  private readonly strays: StrayLogging;

  constructor(private readonly deps: MessageReaderDeps) {
    this.strays = deps.strays ?? HTTP_STRAYS;
    this.stray = new LogBudget(deps.logger, MAX_STRAY_LINES_PER_SECOND, this.strays.skipped);
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
      return this.readNotJson(json);
    }
    this.readValue(value, json, extra);
  }

  /** A read that is no JSON (for a reader that parses on its own, as stdio does): logged. */
  readNotJson(text: string): void {
    this.logStray(this.strays.notJson, text);
  }

  /** What was read, already parsed from `text`: a message or a batch of them. */
  readValue(value: unknown, text: string, extra?: MessageExtra): void {
    const batch = Array.isArray(value);
    if (batch && value.length === 0 && this.strays.emptyBatchIsStray) return this.logStray(this.strays.notMessage, text);
    // Each item of a batch on its own, so one that fails to be handled loses none after it.
    for (const item of batch ? (value as unknown[]) : [value]) {
      try {
        this.take(item, batch ? undefined : text, text, extra);
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
    // A refusal that cannot be sent (the connection is going) has nobody left to wait on it.
    if (refusal) void this.deps.send(refusal).catch(() => undefined);
    // An answer in the wrong shape still ends its request, as an error, rather than leave it to time out.
    const asError = invalidResponseAsError(value);
    if (asError) this.deps.deliver(asError, undefined, extra);
    this.logStray(this.strays.notMessage, this.strays.logWholeRead ? read : textOf(value, read));
  }

  private logStray(as: { field: string; message: string }, text: string): void {
    if (this.stray.take()) this.deps.logger.warn({ [as.field]: this.loggable(text) }, as.message);
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
