import { rmSync } from 'node:fs';
import { bulkFixturePath } from '@switchboard/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { connectHost, type Host } from './support/hosts.js';

/**
 * What one upstream can make the gateway hold: the real daemon over bulk fixture upstreams
 * whose lists pass the `lists` limits (the default maxItems, a server's own maxItems and
 * maxBytes), read by a real SDK host. Each keeps the first items in its upstream's order,
 * says so once in the log and in /readyz, and a reload that changes the limit reads again.
 */

type Json = Record<string, unknown>;

const bulk = (env: Record<string, string>, extra: Json = {}): Json => ({
  command: process.execPath,
  args: [bulkFixturePath()],
  env,
  ...extra,
});

const DEFAULT_MAX_ITEMS = 10_000;
const servers = (longMaxItems: number): Json => ({
  // 12,000 resources: past the default maxItems.
  wide: bulk({ BULK_TOOLS: '5', BULK_RESOURCES: '12000', BULK_PAGE_SIZE: '1000' }),
  // 2,000 tools in pages of 100, under its own maxItems.
  long: bulk({ BULK_TOOLS: '2000', BULK_PAGE_SIZE: '100' }, { lists: { maxItems: longMaxItems } }),
  // Tools of 10 KB each, under 64 KiB.
  heavy: bulk({ BULK_TOOLS: '50', BULK_PAGE_SIZE: '10', BULK_DESCRIPTION_BYTES: '10000' }, { lists: { maxBytes: 65_536 } }),
});

let dir: string;
let daemon: DaemonHandle;
let host: Host;

const bulkNames = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(7, '0')}`);

/** Follows nextCursor to the end of one of the gateway's lists. */
async function walk<P extends { nextCursor?: string }>(page: (cursor?: string) => Promise<P>, names: (page: P) => string[]): Promise<string[]> {
  const all: string[] = [];
  let cursor: string | undefined;
  do {
    const next = await page(cursor);
    all.push(...names(next));
    cursor = next.nextCursor;
  } while (cursor !== undefined);
  return all;
}

const toolNames = () => walk((cursor) => host.client.listTools(cursor === undefined ? {} : { cursor }), (p) => p.tools.map((t) => t.name));
const resourceUris = () => walk((cursor) => host.client.listResources(cursor === undefined ? {} : { cursor }), (p) => p.resources.map((r) => r.uri));

const of = (names: string[], prefix: string) => names.filter((n) => n.startsWith(prefix));

/** The daemon's warnings (pino JSON on stderr) about a list it cut. */
function cutWarnings(): Json[] {
  return daemon
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Json)
    .filter((entry) => String(entry.msg).includes(' items are served; raise lists.'));
}

async function truncated(): Promise<Record<string, unknown>> {
  const body = (await (await fetch(`${daemon.baseUrl}/readyz`)).json()) as { upstreams: Array<{ name: string; truncatedLists?: unknown }> };
  return Object.fromEntries(body.upstreams.map((u) => [u.name, u.truncatedLists]));
}

beforeAll(async () => {
  dir = tempDir('sb-lists-');
  daemon = await startDaemon(writeConfig({ mcpServers: servers(250) }, dir));
  host = await connectHost('streamable-http', { daemon });
});
afterAll(async () => {
  await host?.close();
  await stopAllDaemons();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('lists: what is kept of an upstream list that passes its limits', () => {
  it("serves the first items, in the upstream's order: maxItems by default and per server, and maxBytes", async () => {
    const tools = await eventually(async () => {
      const names = await toolNames();
      return ['heavy__', 'long__', 'wide__'].every((prefix) => of(names, prefix).length > 0) ? names : undefined;
    }, 30_000, 'the three upstreams listed');
    expect(of(tools, 'long__')).toEqual(bulkNames('long__bulk_', 250));
    // Each heavy tool's JSON is a little over 10,000 bytes: six fit in 65,536.
    expect(of(tools, 'heavy__')).toEqual(bulkNames('heavy__bulk_', 6));
    // A list under the limits is whole.
    expect(of(tools, 'wide__')).toEqual(bulkNames('wide__bulk_', 5));
    expect(await resourceUris()).toEqual(bulkNames('bulk://item/', DEFAULT_MAX_ITEMS));
  });

  it('logs one warning per cut list, naming the upstream, the list and the limit', async () => {
    // The log reaches this process through its own pipe, maybe after the lists did.
    await eventually(() => cutWarnings().length >= 3 || undefined, 15_000, 'the warnings');
    expect(cutWarnings().map((w) => [w.upstream, w.method, w.limit, w.max, w.kept]).sort()).toEqual([
      ['heavy', 'tools/list', 'maxBytes', 65_536, 6],
      ['long', 'tools/list', 'maxItems', 250, 250],
      ['wide', 'resources/list', 'maxItems', DEFAULT_MAX_ITEMS, DEFAULT_MAX_ITEMS],
    ]);
    expect(cutWarnings().find((w) => w.upstream === 'long')?.msg).toBe(
      "tools/list of upstream 'long' passes lists.maxItems (250): only its first 250 items are served; raise lists.maxItems for this server to serve more",
    );
  });

  it('shows the cut lists in /readyz, which stays ready', async () => {
    expect((await fetch(`${daemon.baseUrl}/readyz`)).status).toBe(200);
    expect(await truncated()).toEqual({
      wide: [{ method: 'resources/list', kept: DEFAULT_MAX_ITEMS, limit: 'maxItems', max: DEFAULT_MAX_ITEMS }],
      long: [{ method: 'tools/list', kept: 250, limit: 'maxItems', max: 250 }],
      heavy: [{ method: 'tools/list', kept: 6, limit: 'maxBytes', max: 65_536 }],
    });
  });

  it("a reload that raises a server's limit reads its lists again: more is served, with one warning for the new limit", async () => {
    writeConfig({ mcpServers: servers(400) }, dir);
    await eventually(async () => of(await toolNames(), 'long__').length === 400, 30_000, 'long listed under its new limit');
    expect(of(await toolNames(), 'long__')).toEqual(bulkNames('long__bulk_', 400));
    expect((await truncated())['long']).toEqual([{ method: 'tools/list', kept: 400, limit: 'maxItems', max: 400 }]);
    // One more warning, for long's new limit; none for the lists whose limits stayed.
    await eventually(() => cutWarnings().length >= 4 || undefined, 15_000, "the warning for long's new limit");
    expect(cutWarnings().map((w) => [w.upstream, w.max])).toEqual(
      expect.arrayContaining([
        ['long', 250],
        ['long', 400],
      ]),
    );
    expect(cutWarnings()).toHaveLength(4);
  });
});
