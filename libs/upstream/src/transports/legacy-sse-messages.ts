import type { Logger } from '@switchboard/observability';
import type { JsonRpcMessage } from '@switchboard/core';
import { UpstreamMessageReader } from './message-reader.js';
import type { UpstreamTransport } from './upstream-transport.js';

/** What of the SDK's SSEClientTransport this reaches: its private event source, once started. */
interface SdkSseTransport {
  start(): Promise<void>;
  close(): Promise<void>;
  send(message: JsonRpcMessage): Promise<void>;
  onmessage?: (message: JsonRpcMessage) => void;
  _eventSource?: { onmessage: ((event: MessageEvent) => void) | null };
}

/**
 * Has the gateway read a legacy HTTP+SSE upstream's messages itself (message-reader.ts), as
 * it reads a Streamable HTTP one's. The SDK's SSEClientTransport parses each event with its
 * own schema and reports what fails it only to onerror, which the connection logs at debug:
 * an answer in a shape JSON-RPC does not allow, or a batch, left its call waiting for its
 * timeout, and a request in the wrong shape was never answered. Once the transport's event
 * stream is open (start), its message events go to the reader instead. This reaches into the
 * SDK's private `_eventSource`: the SDK is pinned to an exact version, start fails should
 * that move (below), and so does upstream-protocol-errors.e2e-spec.ts (its legacy upstream
 * never starts; and it requires each request answered exactly once).
 */
export function readLegacyMessages(transport: UpstreamTransport, logger: Logger, redactText: (text: string) => string): UpstreamTransport {
  const sdk = transport as unknown as SdkSseTransport;
  const reader = new UpstreamMessageReader({
    logger,
    redactText,
    send: (refusal) => sdk.send(refusal),
    deliver: (message) => sdk.onmessage?.(message),
  });
  const start = sdk.start.bind(sdk);
  const close = sdk.close.bind(sdk);
  sdk.start = async () => {
    await start();
    const events = sdk._eventSource;
    // Its own handler must be there to replace. Should the SDK rename the field, the messages
    // would go on through its parser (the hangs above, back without a word); should it listen
    // with addEventListener('message'), both would take each message and every upstream
    // request be answered twice. Either way the upstream is refused at start, loudly, rather
    // than served wrongly: a failed start shows in its status and the log, and the SDK's
    // version is pinned, so only an upgrade brings it, caught by the spec and the e2e.
    if (typeof events?.onmessage !== 'function') {
      await close().catch(() => undefined);
      throw new Error('legacy HTTP+SSE: the SDK SSEClientTransport no longer sets _eventSource.onmessage; the gateway cannot read its messages');
    }
    events.onmessage = (event) => reader.read(String(event.data));
  };
  sdk.close = async () => {
    reader.stop();
    await close();
  };
  return transport;
}
