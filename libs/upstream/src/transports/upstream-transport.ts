import type { JsonRpcMessage, SendOptions } from '@switchboard/core';

/**
 * What the connection needs from a transport. The SDK's client transports satisfy it
 * structurally; the stdio one is our own (see stdio-transport.ts for why).
 */
export interface UpstreamTransport {
  start(): Promise<void>;
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void>;
  close(): Promise<void>;
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  setProtocolVersion?: (version: string) => void;
  readonly sessionId?: string;
  /** Why the connection closed, when the transport knows (a process's exit status). */
  closeReason?(): string | undefined;
}
