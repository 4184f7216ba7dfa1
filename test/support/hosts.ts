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

type Params = Record<string, unknown>;
type Answer = (params: Params) => Params | Promise<Params>;
export type ClientCapabilities = NonNullable<ClientOptions['capabilities']>;

/**
 * A host over Streamable HTTP that declares `capabilities` and answers the relayed sampling
 * and elicitation requests with `answers` (the SDK refuses a handler for a capability the
 * client did not declare, so only declared ones are set). `asked` holds each request's
 * params, in arrival order. With `protocolVersion` it speaks only that revision.
 */
export async function relayHost(
  daemon: DaemonHandle,
  name: string,
  capabilities: ClientCapabilities,
  answers: { sampling?: Answer; elicitation?: Answer } = {},
  protocolVersion?: string,
): Promise<{ client: Client; asked: Params[] }> {
  const asked: Params[] = [];
  const client = new Client({ name, version: '1.0.0' }, { capabilities, ...(protocolVersion && { supportedProtocolVersions: [protocolVersion] }) });
  const answering = (answer: Answer | undefined) => async (request: { params: unknown }) => {
    asked.push(request.params as Params);
    if (!answer) throw new Error(`${name} was not expecting a question`);
    return (await answer(request.params as Params)) as never;
  };
  if (capabilities.sampling) client.setRequestHandler('sampling/createMessage', answering(answers.sampling));
  if (capabilities.elicitation) client.setRequestHandler('elicitation/create', answering(answers.elicitation));
  await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl)));
  return { client, asked };
}
