import { LATEST_LEGACY_VERSION, isSupportedVersion, type JsonRpcPeer } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import { withTimeout } from './backoff.js';
import { servedInstructions } from './instructions.js';
import { capabilityWarning } from './served-capabilities.js';
import type { UpstreamTransport } from './transports/upstream-transport.js';
import type { ClientIdentity } from './upstream.types.js';

type Item = Record<string, unknown>;

/** What an upstream said of itself when it answered initialize. */
export interface ServerHello {
  protocolVersion: string;
  serverInfo?: Item;
  capabilities: Item;
  /** As they are served (servedInstructions). */
  instructions?: string;
  /** What /readyz warns of its capabilities (capabilityWarning). */
  warning?: string;
}

export interface HandshakeOptions {
  /** What the gateway can answer of the server's own requests. */
  clientCapabilities: Item;
  client: ClientIdentity;
  connectMs: number;
}

/**
 * The MCP handshake on a transport not yet started: start, initialize, refuse a protocol
 * version the gateway does not speak, tell the transport the version (HTTP sends it as a
 * header), notifications/initialized. The whole of it within connectMs: over HTTP,
 * notifications/initialized is a POST of its own, and a server that never answers it would
 * hold the connect (and with it a stop, shutdown or reload) for good.
 */
export function handshake(peer: JsonRpcPeer, transport: UpstreamTransport, options: HandshakeOptions, log: Logger): Promise<ServerHello> {
  return withTimeout(
    (async () => {
      await transport.start();
      const answer = await peer.request('initialize', {
        protocolVersion: LATEST_LEGACY_VERSION,
        capabilities: options.clientCapabilities,
        clientInfo: options.client,
      });
      if (!isSupportedVersion(answer.protocolVersion)) {
        throw new Error(`upstream chose protocol version ${String(answer.protocolVersion)}, which Switchboard does not speak`);
      }
      const protocolVersion = answer.protocolVersion;
      transport.setProtocolVersion?.(protocolVersion);
      await peer.notify('notifications/initialized');
      const capabilities = (answer.capabilities as Item | undefined) ?? {};
      return {
        protocolVersion,
        serverInfo: answer.serverInfo as Item | undefined,
        capabilities,
        instructions: typeof answer.instructions === 'string' ? servedInstructions(answer.instructions, log) : undefined,
        warning: capabilityWarning(capabilities),
      };
    })(),
    options.connectMs,
    `the handshake (initialize, notifications/initialized) did not finish within ${options.connectMs} ms`,
  );
}
