import { Client, SSEClientTransport, StreamableHTTPClientTransport, type ClientOptions } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { SWITCHBOARD_BIN, type DaemonHandle } from './daemon.js';

/** How a host reaches the gateway. */
export type HostTransport = 'streamable-http' | 'sse' | 'stdio';

export interface Host {
  client: Client;
  /** Notifications received, by method, in arrival order. */
  notifications: Map<string, Record<string, unknown>[]>;
  close(): Promise<void>;
}

const WATCHED = [
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  'notifications/message',
] as const;

/**
 * Connects a real SDK client to the gateway: over HTTP to a running daemon, or, for stdio,
 * by launching `switchboard stdio --config` as a subprocess the way a desktop host would.
 */
export async function connectHost(
  transport: HostTransport,
  target: { daemon?: DaemonHandle; configPath?: string },
  options?: ClientOptions,
): Promise<Host> {
  const client = new Client({ name: `e2e-${transport}`, version: '1.0.0' }, options);
  const notifications = new Map<string, Record<string, unknown>[]>();
  for (const method of WATCHED) {
    client.setNotificationHandler(method, (n: { params?: Record<string, unknown> }) => {
      const list = notifications.get(method) ?? [];
      list.push(n.params ?? {});
      notifications.set(method, list);
    });
  }
  if (transport === 'stdio') {
    const stdio = new StdioClientTransport({
      command: process.execPath,
      args: [SWITCHBOARD_BIN, 'stdio', '--config', target.configPath!],
      env: getDefaultEnvironment(),
      stderr: 'ignore',
    });
    await client.connect(stdio);
  } else {
    const daemon = target.daemon!;
    await client.connect(
      transport === 'sse' ? new SSEClientTransport(new URL(daemon.sseUrl)) : new StreamableHTTPClientTransport(new URL(daemon.mcpUrl)),
    );
  }
  return { client, notifications, close: () => client.close().catch(() => undefined) };
}
