import {
  ErrorCode,
  NOT_JSON_RPC_ERROR,
  POSITIONAL_PARAMS_ERROR,
  allowsBatches,
  classifyMessage,
  errorResponse,
  hasPositionalParams,
  idOf,
  invalidResponseAsError,
  type JsonRpcErrorResponse,
  type JsonRpcMessage,
  type RequestId,
} from '@switchboard/core';

/**
 * The most messages one batch may hold. Every message of a batch is taken in one turn of the
 * event loop, so a 13 MiB batch of 300,000 pings (within the body limit) held every other
 * host of the daemon for about 8 s; 1,000 keep that turn short, and no host batches more.
 */
export const MAX_BATCH_MESSAGES = 1_000;

const BYTE_ORDER_MARK = 0xfeff;

export type Intake =
  | { ok: true; messages: JsonRpcMessage[]; errors: JsonRpcErrorResponse[]; batch: boolean }
  | { ok: false; error: JsonRpcErrorResponse };

/**
 * Parses a body; malformed JSON is -32700 with a null id, as JSON-RPC requires. A leading
 * byte order mark is skipped (RFC 8259 lets a parser ignore it, and some Windows tools write
 * one): JSON.parse refuses it, while a stdio line, trimmed, never had it.
 */
export function parseBody(text: string, unit: 'body' | 'line' = 'body'): { ok: true; value: unknown } | { ok: false; error: JsonRpcErrorResponse } {
  try {
    return { ok: true, value: JSON.parse(text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text) };
  } catch {
    // `unit`: what the transport calls a message, an HTTP body or a stdio line.
    return { ok: false, error: errorResponse(null, { code: ErrorCode.ParseError, message: `Parse error: the ${unit} is not valid JSON` }) };
  }
}

/**
 * The id of a body that is one request, else null: what an error answer to the whole body
 * (a transport refusal) carries, so that a host can tell which request it refuses.
 */
export function requestIdOf(value: unknown): RequestId | null {
  return classifyMessage(value) === 'request' ? (value as { id: RequestId }).id : null;
}

/** A single initialize request (with an id): what starts a Streamable HTTP session. */
export function isInitializeRequest(value: unknown): boolean {
  return classifyMessage(value) === 'request' && (value as { method: unknown }).method === 'initialize';
}

/**
 * Splits a decoded body into valid messages and error responses for the invalid ones.
 * Batches are accepted only where the negotiated revision has them (2025-03-26), and never
 * for initialize (or before a version is negotiated).
 */
export function takeMessages(value: unknown, protocolVersion: string | undefined): Intake {
  const batch = Array.isArray(value);
  if (batch) {
    if (!protocolVersion || !allowsBatches(protocolVersion)) {
      const why = protocolVersion ? `protocol version ${protocolVersion} does not allow batches` : 'batches are not allowed before initialize';
      return { ok: false, error: errorResponse(null, { code: ErrorCode.InvalidRequest, message: `Invalid request: ${why}` }) };
    }
    if (value.length === 0) {
      return { ok: false, error: errorResponse(null, { code: ErrorCode.InvalidRequest, message: 'Invalid request: empty batch' }) };
    }
    if (value.length > MAX_BATCH_MESSAGES) {
      const message = `Invalid request: a batch may hold at most ${MAX_BATCH_MESSAGES} messages (this one has ${value.length})`;
      return { ok: false, error: errorResponse(null, { code: ErrorCode.InvalidRequest, message }) };
    }
  }
  const items = batch ? (value as unknown[]) : [value];
  const messages: JsonRpcMessage[] = [];
  const errors: JsonRpcErrorResponse[] = [];
  for (const item of items) {
    if (hasPositionalParams(item)) {
      // Valid JSON-RPC, but MCP's params are always named (an object).
      errors.push(errorResponse(idOf(item), POSITIONAL_PARAMS_ERROR));
    } else if (classifyMessage(item) === 'invalid') {
      const failed = invalidResponseAsError(item, 'host');
      if (failed) {
        // The host's answer to a relayed request, in a shape JSON-RPC does not allow. Its id is
        // the gateway's, not the host's: an error under it would read, to a host with a request
        // of the same id, as the answer to that one. The request it answers fails at once
        // instead (rather than wait out its timeout), and the host hears of it without an id.
        messages.push(failed);
        errors.push(errorResponse(null, { code: ErrorCode.InvalidRequest, message: 'Invalid request: a response in a shape JSON-RPC does not allow' }));
      } else {
        errors.push(errorResponse(idOf(item), NOT_JSON_RPC_ERROR));
      }
    } else if (batch && (item as { method?: unknown }).method === 'initialize') {
      errors.push(errorResponse(idOf(item), { code: ErrorCode.InvalidRequest, message: 'Invalid request: initialize cannot be batched' }));
    } else {
      messages.push(item as JsonRpcMessage);
    }
  }
  return { ok: true, messages, errors, batch };
}
