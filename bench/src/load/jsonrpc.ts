/**
 * The few JSON-RPC pieces the load clients need. Request bodies are assembled from
 * pre-serialised params so that the hot loop does no JSON.stringify of its own.
 */

/** The revision the load clients negotiate. */
export const PROTOCOL_VERSION = '2025-11-25';

/** One request as the load clients send it: the params are serialised once, up front. */
export interface RpcRequest {
  readonly method: string;
  readonly paramsJson: string;
}

/** How one call ended: a result, or why it counts as failed. */
export type CallOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; error: string };

/** Anything a closed-loop worker can send requests through (an HTTP session, a shared pipe). */
export interface McpCaller {
  call(request: RpcRequest): Promise<CallOutcome>;
}

export function rpc(method: string, params: unknown = {}): RpcRequest {
  return { method, paramsJson: JSON.stringify(params) };
}

export function toolCall(name: string, args: Record<string, unknown>): RpcRequest {
  return rpc('tools/call', { name, arguments: args });
}

export function requestBody(id: number, request: RpcRequest): string {
  return `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(request.method)},"params":${request.paramsJson}}`;
}

export const INITIALIZE: RpcRequest = rpc('initialize', {
  protocolVersion: PROTOCOL_VERSION,
  capabilities: {},
  clientInfo: { name: 'switchboard-bench', version: '1.0.0' },
});

export const INITIALIZED_NOTIFICATION = '{"jsonrpc":"2.0","method":"notifications/initialized"}';

/**
 * Classifies a parsed JSON-RPC response: a JSON-RPC error and a tool result with
 * isError: true both count as failed calls (a gateway answering errors fast must not
 * look like a fast gateway).
 */
export function outcomeOf(message: unknown): CallOutcome {
  if (!isObject(message)) return { ok: false, error: 'response is not a JSON object' };
  const error = message['error'];
  if (error !== undefined) {
    const detail = isObject(error) ? `${String(error['code'])} ${String(error['message'])}` : JSON.stringify(error);
    return { ok: false, error: `JSON-RPC error ${detail}` };
  }
  const result = message['result'];
  if (!isObject(result)) return { ok: false, error: 'response has no result object' };
  if (result['isError'] === true) return { ok: false, error: `tool error: ${firstText(result).slice(0, 200)}` };
  return { ok: true, result };
}

/** True when message is the JSON-RPC response (result or error) to request id. */
export function isResponseTo(message: unknown, id: number): boolean {
  return isObject(message) && message['id'] === id && ('result' in message || 'error' in message);
}

function firstText(result: Record<string, unknown>): string {
  const content = result['content'];
  if (Array.isArray(content) && isObject(content[0]) && typeof content[0]['text'] === 'string') return content[0]['text'];
  return '';
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
