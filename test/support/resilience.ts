import type { Client } from '@modelcontextprotocol/client';
import type { startDaemon } from './daemon.js';
import { connectHost, type Host } from './hosts.js';

/** What the resilience e2e files share: SDK hosts they close after each test, and how they read answers. */

/** Hosts closed after each test: those `host` opens, and any a test connects itself and pushes. */
export const hosts: Host[] = [];

/** An SDK host on the daemon over Streamable HTTP, closed by closeHosts. */
export async function host(daemon: Awaited<ReturnType<typeof startDaemon>>): Promise<Client> {
  const h = await connectHost('streamable-http', { daemon });
  hosts.push(h);
  return h.client;
}

/** For afterEach, before the daemons stop: closes every host in `hosts`. */
export async function closeHosts(): Promise<void> {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
}

/** What the fixture behind `tool` reports: its process, the calls it took (these included) and those cancelled. */
export async function stats(client: Client, tool = 'fx__stats'): Promise<{ pid: number; cancelled: number; calls: number }> {
  const result = await client.callTool({ name: tool, arguments: {} });
  return JSON.parse((result.content as { text: string }[])[0].text);
}

/** The error `p` rejects with; undefined if it resolves. */
export const errorOf = (p: Promise<unknown>) => p.then(() => undefined, (e: { code?: number; message?: string }) => e);
