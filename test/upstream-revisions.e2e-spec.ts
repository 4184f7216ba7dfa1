import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, eventually, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { connectHost, type Host } from './support/hosts.js';

type Params = Record<string, unknown>;

/** The hand-written upstream, speaking only `version`, with a strict schema; it records what it is sent. */
const upstreamOn = (version: string) => ({
  command: process.execPath,
  args: [join(REPO_ROOT, 'test/fixtures/upstream-older-revision.mjs')],
  env: { LEGACY_VERSION: version },
});

const VERSIONS = { u1105: '2024-11-05', u0326: '2025-03-26', u0618: '2025-06-18' } as const;

afterAll(stopAllDaemons);

/**
 * The real daemon in front of upstreams pinned to older revisions, each with a schema that
 * refuses fields its revision does not define, and a 2025-11-25 host: what the host sends
 * reaches each upstream as the upstream's revision defines the request.
 */
describe("requests forwarded to an upstream take the shape of the upstream's revision", () => {
  let daemon: DaemonHandle;
  let host: Host;

  beforeAll(async () => {
    const servers = Object.fromEntries(Object.entries(VERSIONS).map(([name, version]) => [name, upstreamOn(version)]));
    daemon = await startDaemon(writeConfig({ namespace: 'prefix', mcpServers: servers }, tempDir()));
    host = await connectHost('streamable-http', { daemon });
    await eventually(async () => (await host.client.listPrompts()).prompts.length === Object.keys(VERSIONS).length || undefined);
  });
  afterAll(async () => host?.close());

  /** What the upstream `server` was sent as completion/complete params, in order. */
  const received = async (server: string): Promise<Params[]> => {
    const result = (await host.client.callTool({ name: `${server}__received`, arguments: {} })) as { content: { text: string }[] };
    return JSON.parse(result.content[0].text) as Params[];
  };
  // A prompt reference's title (BaseMetadata's, 2025-06-18) is in the spec's schema, not the SDK's type.
  const titled = (name: string) => ({ type: 'ref/prompt', name, title: 'Greeting' }) as { type: 'ref/prompt'; name: string };
  const complete = (server: string) =>
    host.client.complete({
      ref: titled(`${server}__greet`),
      argument: { name: 'name', value: 'al' },
      context: { arguments: { salutation: 'Dear' } },
    });

  it.each([
    ['u1105', '2024-11-05'],
    ['u0326', '2025-03-26'],
  ])('completion/complete reaches a %s upstream (%s) without the context and prompt title 2025-06-18 added, and is answered', async (server) => {
    expect((await complete(server)).completion.values).toEqual(['albert', 'alice']);
    expect(await received(server)).toEqual([{ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'al' } }]);
  });

  it('completion/complete reaches a 2025-06-18 upstream with its context and prompt title', async () => {
    expect((await complete('u0618')).completion.values).toEqual(['albert', 'alice']);
    expect(await received('u0618')).toEqual([
      { ref: { type: 'ref/prompt', name: 'greet', title: 'Greeting' }, argument: { name: 'name', value: 'al' }, context: { arguments: { salutation: 'Dear' } } },
    ]);
  });
});
