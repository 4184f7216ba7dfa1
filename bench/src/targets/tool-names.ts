import { rpc, type McpCaller } from '../load/jsonrpc.js';

export interface ToolNames {
  echo: string;
  payload: string;
}

/**
 * The public name of an upstream tool in a listing: the name itself (a bare upstream)
 * or the name behind a namespace prefix such as `bench__echo`. Discovered rather than
 * hard-coded so the bench keeps working whatever naming the gateway is configured with.
 */
export function findPublicToolName(names: readonly string[], tool: string): string | undefined {
  if (names.includes(tool)) return tool;
  return names.find((name) => name.endsWith(tool) && /[^A-Za-z0-9]$/.test(name.slice(0, -tool.length)));
}

export interface ToolListing {
  names: string[];
  pages: number;
}

/** Walks tools/list until nextCursor is absent. */
export async function listAllTools(caller: McpCaller): Promise<ToolListing> {
  const names: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const outcome = await caller.call(rpc('tools/list', cursor === undefined ? {} : { cursor }));
    if (!outcome.ok) throw new Error(`tools/list failed: ${outcome.error}`);
    pages++;
    const tools = outcome.result['tools'];
    if (Array.isArray(tools)) for (const tool of tools as { name?: unknown }[]) names.push(String(tool.name));
    const next = outcome.result['nextCursor'];
    cursor = typeof next === 'string' && next !== '' ? next : undefined;
  } while (cursor !== undefined);
  return { names, pages };
}

/**
 * Polls tools/list until ready(listing) holds: a gateway announces that it listens
 * before its upstreams have all connected.
 */
export async function waitForTools(
  caller: McpCaller,
  ready: (listing: ToolListing) => boolean,
  timeoutMs: number,
): Promise<ToolListing> {
  const deadline = Date.now() + timeoutMs;
  let last: ToolListing | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await listAllTools(caller);
      if (ready(last)) return last;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const seen = last ? `${last.names.length} tools in ${last.pages} pages` : `no listing (${String(lastError)})`;
  throw new Error(`tools did not become ready within ${timeoutMs} ms: ${seen}`);
}

export async function discoverTools(caller: McpCaller, timeoutMs = 30_000): Promise<ToolNames> {
  const { names } = await waitForTools(
    caller,
    ({ names }) => findPublicToolName(names, 'echo') !== undefined && findPublicToolName(names, 'payload') !== undefined,
    timeoutMs,
  );
  return { echo: findPublicToolName(names, 'echo')!, payload: findPublicToolName(names, 'payload')! };
}
