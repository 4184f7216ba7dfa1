import { Client, SSEClientTransport, StreamableHTTPClientTransport, type ClientOptions } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { fixturePath, startHttpFixture, type FixtureKind, type HttpFixture } from './fixture-process.js';

export interface FixtureConnection {
  readonly client: Client;
  /** pid of the fixture process. */
  readonly pid: number;
  /** Set for http and sse: the spawned process, to await its exit or read its stderr. */
  readonly http?: HttpFixture;
  /** stderr of a stdio fixture (http fixtures: http.stderr()). */
  stderr(): string;
  /** Closes the client and stops the fixture process. */
  close(): Promise<void>;
}

/**
 * Connects an SDK client straight to a freshly spawned fixture, bypassing the
 * gateway: the reference a test compares the gateway's answers with.
 */
export async function connectToFixture(
  kind: FixtureKind,
  env: Record<string, string> = {},
  clientOptions?: ClientOptions,
): Promise<FixtureConnection> {
  const client = new Client({ name: 'fixture-test-client', version: '1.0.0' }, clientOptions);
  if (kind === 'stdio') {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [fixturePath('stdio')],
      env: { ...getDefaultEnvironment(), ...env },
      stderr: 'pipe',
    });
    let stderr = '';
    // Reading also keeps the child's stderr pipe from filling up and blocking it.
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    await client.connect(transport);
    return { client, pid: transport.pid!, stderr: () => stderr, close: () => client.close() };
  }
  const http = await startHttpFixture(kind, env);
  try {
    const url = new URL(http.url);
    await client.connect(kind === 'http' ? new StreamableHTTPClientTransport(url) : new SSEClientTransport(url));
  } catch (error) {
    await http.stop();
    throw error;
  }
  return {
    client,
    pid: http.pid,
    http,
    stderr: () => http.stderr(),
    close: async () => {
      await client.close().catch(() => undefined);
      await http.stop();
    },
  };
}
