import { memberSpan, type JsonRpcNotification } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import { LogBudget, logMessageBudget } from './log-budget.js';

/**
 * The most of a log message's params (notifications/message) relayed, in characters of JSON.
 * Each message goes to every session whose level admits it, and hosts show it to a person or
 * put it in a model's context: a log line of 64 Ki characters is already far past anything
 * readable, where one of 50 MiB cost every host 50 MiB (and the daemon a copy per session
 * being written).
 */
export const MAX_LOG_MESSAGE_CHARS = 64 * 1024;
/** A logger name longer than this is cut in a message cut for its size. */
const MAX_LOGGER_CHARS = 256;

type Params = Record<string, unknown>;

/**
 * The bounds on one upstream connection's log messages relayed to hosts: how many a second
 * (logMessageBudget) and how large each (MAX_LOG_MESSAGE_CHARS). Their params are serialized once
 * to be measured; the cut data is taken from that text (memberSpan), never serialized again.
 * One over the bound is relayed with its level, its logger and, as its data, the start of the
 * data's JSON (of a string, of the string) with a note of how long it was; any other field is
 * left out. Each is logged at warn, at most one a second (the rest counted).
 */
export class LogMessageBounds {
  private readonly count: LogBudget;
  private readonly warnings: LogBudget;

  constructor(private readonly log: Logger) {
    this.count = logMessageBudget(log);
    this.warnings = new LogBudget(log, 1, (count) => `upstream log messages: ${count} more over ${MAX_LOG_MESSAGE_CHARS} characters relayed cut`);
  }

  /**
   * `n` as it may be relayed now, or undefined when it is over the count. Counted before
   * measured: what is over the count is never serialized.
   */
  relayable(n: JsonRpcNotification): JsonRpcNotification | undefined {
    return this.count.take() ? this.bounded(n) : undefined;
  }

  /** `n` as it may be relayed: itself when within the size bound. */
  bounded(n: JsonRpcNotification): JsonRpcNotification {
    const params = n.params ?? {};
    let text: string;
    try {
      text = JSON.stringify(params);
    } catch {
      // Nested too deep to serialize (the stack): no host could be sent it either.
      return this.cut(n, params, '[log data not relayed: it could not be serialized]', undefined);
    }
    if (text.length <= MAX_LOG_MESSAGE_CHARS) return n;
    return this.cut(n, params, cutData(params.data, text), text.length);
  }

  /** Says what it left out in the second it ends in. */
  stop(): void {
    this.count.stop();
    this.warnings.stop();
  }

  private cut(n: JsonRpcNotification, params: Params, data: unknown, chars: number | undefined): JsonRpcNotification {
    if (this.warnings.take()) {
      this.log.warn({ chars, limit: MAX_LOG_MESSAGE_CHARS }, `upstream log message over ${MAX_LOG_MESSAGE_CHARS} characters: relayed cut`);
    }
    const logger = typeof params.logger === 'string' ? { logger: params.logger.slice(0, MAX_LOGGER_CHARS) } : {};
    return { ...n, params: { level: params.level, ...logger, data } };
  }
}

/** The data of a message whose params serialized to `text`, cut to the bound if over it. */
function cutData(data: unknown, text: string): unknown {
  if (typeof data === 'string') {
    return data.length <= MAX_LOG_MESSAGE_CHARS ? data : `${data.slice(0, MAX_LOG_MESSAGE_CHARS)}${note(data.length)}`;
  }
  const [start, end] = memberSpan(text, 'data') ?? [0, 0];
  if (end - start <= MAX_LOG_MESSAGE_CHARS) return data;
  return `${text.slice(start, start + MAX_LOG_MESSAGE_CHARS)}${note(end - start)}`;
}

function note(chars: number): string {
  return `… [cut by Switchboard: ${chars} characters in all]`;
}
