import type { JsonRpcMessage } from '@switchboard/core';
import { silentLogger } from '@switchboard/observability';
import { describe, expect, it } from 'vitest';
import { readLegacyMessages } from './legacy-sse-messages.js';
import type { UpstreamTransport } from './upstream-transport.js';

type Listener = (event: MessageEvent) => void;

/**
 * The shape of the SDK's SSEClientTransport that readLegacyMessages reaches into: once started,
 * an event source whose message events its own parser takes, by `onmessage` (as the pinned
 * SDK does) or, as a later SDK might, by addEventListener('message'). Events are dispatched
 * as an EventSource would: to the listeners, then to onmessage.
 */
class SdkShape {
  readonly sent: JsonRpcMessage[] = [];
  readonly parsed: unknown[] = [];
  closed = false;
  onmessage?: (message: JsonRpcMessage) => void;
  _eventSource?: { onmessage: Listener | null; listeners: Listener[] };

  constructor(private readonly attach: 'onmessage' | 'addEventListener' | 'none') {}

  async start(): Promise<void> {
    if (this.attach === 'none') return;
    const sdkParser: Listener = (event) => void this.parsed.push(JSON.parse(String(event.data)));
    this._eventSource = { onmessage: null, listeners: [] };
    if (this.attach === 'onmessage') this._eventSource.onmessage = sdkParser;
    else this._eventSource.listeners.push(sdkParser);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  async send(message: JsonRpcMessage): Promise<void> {
    this.sent.push(message);
  }

  event(data: string): void {
    const event = { data } as MessageEvent;
    for (const listener of this._eventSource?.listeners ?? []) listener(event);
    this._eventSource?.onmessage?.(event);
  }
}

const wrapped = (sdk: SdkShape) => readLegacyMessages(sdk as unknown as UpstreamTransport, silentLogger(), (text) => text) as unknown as SdkShape;

describe('readLegacyMessages', () => {
  it('has the SDK\'s message events read by the gateway, not its parser: a request in the wrong shape is answered once', async () => {
    const sdk = wrapped(new SdkShape('onmessage'));
    const delivered: JsonRpcMessage[] = [];
    sdk.onmessage = (message) => void delivered.push(message);
    await sdk.start();
    sdk.event('{"jsonrpc":"1.0","id":"probe","method":"ping"}');
    sdk.event('[{"jsonrpc":"2.0","id":1,"result":{}}]');
    expect(sdk.sent).toEqual([{ jsonrpc: '2.0', id: 'probe', error: { code: -32600, message: 'Invalid request: not a JSON-RPC 2.0 message' } }]);
    expect(delivered).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    expect(sdk.parsed).toEqual([]);
  });

  it.each([
    ['listens with addEventListener(\'message\')', 'addEventListener'],
    ['has no _eventSource', 'none'],
  ] as const)('fails start, and closes the transport, when the SDK %s', async (_how, attach) => {
    const sdk = wrapped(new SdkShape(attach));
    await expect(sdk.start()).rejects.toThrow(/no longer sets _eventSource\.onmessage/);
    expect(sdk.closed).toBe(true);
  });
});
