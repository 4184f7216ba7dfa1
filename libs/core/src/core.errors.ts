/**
 * JSON-RPC and gateway error codes, and the one error class that may cross the MCP edge.
 *
 * Anything thrown inside the gateway that is not a `McpError` is an internal fault: the MCP
 * edge answers it with a generic -32603 and logs the detail, so no stack trace or internal
 * message ever reaches a client.
 */
export enum ErrorCode {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  /** The upstream connection closed while the request was in flight (same code as the SDK). */
  ConnectionClosed = -32000,
  /** The request ran past its timeout and was cancelled upstream (same code as the SDK). */
  RequestTimeout = -32001,
  /** Legacy-era "resource not found" (MCP 2025-era servers). */
  ResourceNotFound = -32002,
  /** The upstream that owns the name is not connected right now; fail fast, retry later. */
  UpstreamUnavailable = -32010,
  /** The daemon is shutting down and takes no new requests. */
  ShuttingDown = -32011,
  /**
   * A tools/call that needed a human's approval (policy effect `confirm`) did not get it:
   * declined, or nobody answered in time. `data.reason` says which.
   */
  ApprovalRefused = -32014,
  /**
   * The 2026-07-28 revision's "unsupported protocol version", `data.supported` listing those
   * spoken: what a request of that revision hears from a gateway that does not speak it.
   */
  UnsupportedProtocolVersion = -32022,
  /** URL-mode elicitation required (passes through from upstreams). */
  UrlElicitationRequired = -32042,
  /**
   * A rate limit refused the request; `data.retryAfterMs` says when to try again. An
   * application code, outside JSON-RPC's reserved range (-32768 to -32000), as HTTP's 429.
   */
  RateLimited = -31429,
}

export class McpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'McpError';
  }

  toJsonRpcError(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export const invalidParams = (message: string, data?: unknown) =>
  new McpError(ErrorCode.InvalidParams, message, data);

export const methodNotFound = (method: string) =>
  new McpError(ErrorCode.MethodNotFound, `Method not found: ${method}`);

/** The answer to a request whose id a request still running already uses (JSON-RPC ids are unique while in flight). */
export const duplicateIdMessage = (id: string | number) =>
  `Invalid request: id ${JSON.stringify(id)} is already used by a request in progress`;

/** Turns anything thrown into what a client may see. Unknown errors become a bare -32603. */
export function toWireError(err: unknown): { code: number; message: string; data?: unknown } {
  if (err instanceof McpError) return err.toJsonRpcError();
  return { code: ErrorCode.InternalError, message: 'Internal error' };
}
