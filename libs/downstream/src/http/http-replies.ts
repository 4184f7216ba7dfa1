import type { ServerResponse } from 'node:http';
import { errorResponse, type JsonRpcErrorResponse, type RequestId } from '@switchboard/core';

/** A JSON-RPC error as the body of a non-200 HTTP answer (transport-level refusals). */
export function replyError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  id: RequestId | null = null,
  headers: Record<string, string> = {},
): void {
  replyJson(res, status, errorResponse(id, { code, message }), headers);
}

export function replyJson(
  res: ServerResponse,
  status: number,
  body: JsonRpcErrorResponse | JsonRpcErrorResponse[] | Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return void res.end();
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
