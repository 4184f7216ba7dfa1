import type { JsonRpcMessage, MessageExtra, SendOptions } from '@switchboard/core';

/**
 * What the connection needs from a transport. The stdio and Streamable HTTP ones are our own
 * (stdio-transport.ts and streamable-http-transport.ts say why); the SDK's SSEClientTransport,
 * used for legacy HTTP+SSE servers, satisfies it structurally.
 */
export interface UpstreamTransport {
  start(): Promise<void>;
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void>;
  close(): Promise<void>;
  onmessage?: (message: JsonRpcMessage, extra?: MessageExtra) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  setProtocolVersion?: (version: string) => void;
  readonly sessionId?: string;
  /** Why the connection closed, when the transport knows (a process's exit status). */
  closeReason?(): string | undefined;
}

/** Why the transport closed, as the end of a message says it: " (exit code 1)", or nothing. */
export function closeDetail(transport: UpstreamTransport): string {
  const detail = transport.closeReason?.();
  return detail ? ` (${detail})` : '';
}
