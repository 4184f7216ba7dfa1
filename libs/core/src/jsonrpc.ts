import { ErrorCode } from './core.errors.js';

/** The JSON-RPC 2.0 shapes the gateway handles, kept as plain objects so bytes pass through. */
export type RequestId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcResult {
  jsonrpc: '2.0';
  id: RequestId;
  result: Record<string, unknown>;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcResult | JsonRpcErrorResponse;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export type MessageKind = 'request' | 'notification' | 'response' | 'invalid';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

// MCP: "Requests MUST include a string or integer ID"; 1.5 is refused as JSON-RPC allows it.
// So is an integer past 2^53 - 1: JSON.parse rounds it, so its answer would carry another id
// (123456789012345678901234567890 comes back as 1.2345678901234568e+29), which a host that
// compares ids exactly never matches, and two such ids could become one.
const isId = (v: unknown): v is RequestId => typeof v === 'string' || Number.isSafeInteger(v);

/**
 * Classifies one decoded JSON value. Anything that is not a well-formed JSON-RPC 2.0 message
 * is 'invalid' (answered with -32600). MCP forbids null ids on requests.
 */
export function classifyMessage(value: unknown): MessageKind {
  if (!isObject(value) || value.jsonrpc !== '2.0') return 'invalid';
  const hasMethod = 'method' in value;
  if (hasMethod) {
    if (typeof value.method !== 'string' || value.method.length === 0) return 'invalid';
    if (value.params !== undefined && !isObject(value.params)) return 'invalid';
    if (!('id' in value)) return 'notification';
    return isId(value.id) ? 'request' : 'invalid';
  }
  if (!isId(value.id) && value.id !== null) return 'invalid';
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError) return 'invalid';
  if (hasError) {
    const e = value.error;
    return isObject(e) && Number.isInteger(e.code) && typeof e.message === 'string'
      ? 'response'
      : 'invalid';
  }
  return isObject(value.result) ? 'response' : 'invalid';
}

/**
 * A request whose params are a list: valid JSON-RPC, but MCP's params are always named (an
 * object), so it is answered -32602 rather than -32600.
 */
export function hasPositionalParams(value: unknown): boolean {
  if (!isObject(value) || !('id' in value)) return false;
  return value.jsonrpc === '2.0' && typeof value.method === 'string' && Array.isArray(value.params);
}

/** The error for a request whose params are a list: valid JSON-RPC, but MCP's params are always named. */
export const POSITIONAL_PARAMS_ERROR = { code: ErrorCode.InvalidParams, message: 'Invalid params: MCP params must be an object' } as const;
/** The error for a message JSON-RPC 2.0 does not allow. */
export const NOT_JSON_RPC_ERROR = { code: ErrorCode.InvalidRequest, message: 'Invalid request: not a JSON-RPC 2.0 message' } as const;

/**
 * The answer owed to a peer's request that JSON-RPC or MCP does not allow (params that are a
 * list, an empty method, a `jsonrpc` other than "2.0"), under the id it named: -32602 for
 * positional params, else -32600. Undefined when it names no usable id (nothing can wait for
 * an answer to it) or has no method (an invalid answer: see invalidResponseAsError).
 */
export function invalidRequestAnswer(value: unknown): JsonRpcErrorResponse | undefined {
  if (!isObject(value) || !('method' in value) || !isId(value.id)) return undefined;
  return errorResponse(value.id, hasPositionalParams(value) ? POSITIONAL_PARAMS_ERROR : NOT_JSON_RPC_ERROR);
}

/** The id of a message that may be a request, for answering an invalid one where possible. */
export function idOf(value: unknown): RequestId | null {
  return isObject(value) && isId(value.id) ? value.id : null;
}

export const errorResponse = (id: RequestId | null, error: JsonRpcErrorObject): JsonRpcErrorResponse => ({
  jsonrpc: '2.0',
  id,
  error,
});

export const resultResponse = (id: RequestId, result: Record<string, unknown>): JsonRpcResult => ({
  jsonrpc: '2.0',
  id,
  result,
});

export const isResponse = (m: JsonRpcMessage): m is JsonRpcResponse => !('method' in m);
export const isRequest = (m: JsonRpcMessage): m is JsonRpcRequest => 'method' in m && 'id' in m;
export const isNotification = (m: JsonRpcMessage): m is JsonRpcNotification =>
  'method' in m && !('id' in m);

/**
 * A peer's answer that is not a valid response but names the id of a request (`result: null`,
 * `error: "bad"`, an error code of 1.5), as an error response for that id; undefined for
 * anything else. Dropping it would leave the request waiting for its timeout. `sender` names
 * the peer in the message: the upstream, or the host answering a relayed request.
 */
export function invalidResponseAsError(value: unknown, sender: 'upstream' | 'host' = 'upstream'): JsonRpcErrorResponse | undefined {
  if (!isObject(value) || value.jsonrpc !== '2.0' || 'method' in value || !isId(value.id)) return undefined;
  if (!('result' in value) && !('error' in value)) return undefined;
  return errorResponse(value.id, { code: ErrorCode.ConnectionClosed, message: `The ${sender} sent an invalid response` });
}
