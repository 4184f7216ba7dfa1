import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { ProtocolError, ResourceNotFoundError } from '@modelcontextprotocol/client';
import { HELLO_URI } from '@switchboard/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig } from './support/daemon.js';
import { connectHost, type Host } from './support/hosts.js';

/**
 * A published name or URI keeps its meaning when its holder drops the item at runtime: two
 * fixtures in namespace none, where a (first in config order) holds every bare name and URI
 * and b has them prefixed or as gateway URIs. a then removes a tool and a resource and
 * announces list_changed; a host that remembers them must not reach b's through them.
 */

type Json = Record<string, unknown>;

let dir: string;
let host: Host;

beforeAll(async () => {
  dir = tempDir('sb-meanings-');
  const config = {
    namespace: 'none',
    mcpServers: { a: stdioFixture({ FIXTURE_NAME: 'fixture-a' }), b: stdioFixture({ FIXTURE_NAME: 'fixture-b' }) },
  };
  host = await connectHost('streamable-http', { daemon: await startDaemon(writeConfig(config, dir)) });
});
afterAll(async () => {
  await host?.close();
  await stopAllDaemons();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function callText(name: string, args: Json = {}): Promise<string> {
  const result = await host.client.callTool({ name, arguments: args });
  return String((result.content as Json[])[0]?.text);
}

async function readText(uri: string): Promise<string> {
  const result = await host.client.readResource({ uri });
  return String((result.contents[0] as Json).text);
}

async function failure(promise: Promise<unknown>): Promise<ProtocolError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ProtocolError) return err;
    throw err;
  }
  throw new Error('expected the request to fail');
}

const toolNames = async () => (await host.client.listTools()).tools.map((t) => t.name);
const resourceUris = async () => (await host.client.listResources()).resources.map((r) => r.uri);

/** The list once it differs from `before`: whatever it became, the upstream's change reached it. */
const changedFrom = (before: string[], list: () => Promise<string[]>) =>
  eventually(async () => {
    const now = await list();
    return now.join('\n') !== before.join('\n') ? now : undefined;
  }, 15_000, 'the list to change');

describe('a key its holder drops at runtime', () => {
  it('a tool name is not handed to the server that has the prefixed one', async () => {
    expect(await callText('env', { name: 'FIXTURE_NAME' })).toBe('fixture-a');
    expect(await callText('b__env', { name: 'FIXTURE_NAME' })).toBe('fixture-b');
    const before = await toolNames();

    expect(await callText('remove_tool', { name: 'env' })).toBe('removed env');
    const after = await changedFrom(before, toolNames);
    expect(after).not.toContain('env');
    expect(after).toContain('b__env');
    expect(await callText('b__env', { name: 'FIXTURE_NAME' })).toBe('fixture-b');
    // A host that remembers a's env hears "unknown tool", not b's answer to a's arguments.
    const unknown = await failure(host.client.callTool({ name: 'env', arguments: { name: 'FIXTURE_NAME' } }));
    expect({ code: unknown.code, message: unknown.message }).toEqual({ code: -32602, message: expect.stringContaining('Unknown tool: env') });
  });

  it('a resource URI is not read from the server that has it as a gateway URI', async () => {
    const bHello = `switchboard://b/${HELLO_URI}`;
    const before = await resourceUris();
    expect(before).toEqual(expect.arrayContaining([HELLO_URI, bHello]));
    expect(await readText(HELLO_URI)).toBe('Hello from fixture-a');

    expect(await callText('remove_resource', { uri: HELLO_URI })).toBe(`removed ${HELLO_URI}`);
    const after = await changedFrom(before, resourceUris);
    expect(after).not.toContain(HELLO_URI);
    expect(after).toContain(bHello);
    // Still a's, which has no such resource any more: "not found" (-32002 on the wire, which
    // the SDK reads as its ResourceNotFoundError), not b's hello.
    const missing = await failure(host.client.readResource({ uri: HELLO_URI }));
    expect(missing).toBeInstanceOf(ResourceNotFoundError);
    expect(missing.data).toEqual({ uri: HELLO_URI });
    expect(await readText(bHello)).toBe('Hello from fixture-b');
  });
});

describe("a key published under a server's old alias", () => {
  let ownDir: string;
  let ownFile: string;
  let own: Host;
  const config = (mcpServers: Json) => ({ mcpServers });
  const uris = async () => (await own.client.listResources()).resources.map((r) => r.uri);

  beforeAll(async () => {
    ownDir = tempDir('sb-meanings-alias-');
    // b holds the bare URI, so a publishes its hello as a gateway URI under its alias.
    ownFile = writeConfig(config({ b: stdioFixture({ FIXTURE_NAME: 'fixture-b' }), a: stdioFixture({ FIXTURE_NAME: 'fixture-a' }, { alias: 'old' }) }), ownDir);
    own = await connectHost('streamable-http', { daemon: await startDaemon(ownFile) });
  });
  afterAll(async () => {
    await own?.close();
    await stopAllDaemons();
    if (ownDir) rmSync(ownDir, { recursive: true, force: true });
  });

  it('stays with that server after the alias changes, though a server added with that alias asks for it', async () => {
    const oldHello = `switchboard://old/${HELLO_URI}`;
    expect(await uris()).toContain(oldHello);
    const call = (name: string) => own.client.callTool({ name, arguments: { name: 'FIXTURE_NAME' } });
    expect(((await call('old__env')).content as Json[])[0]?.text).toBe('fixture-a');

    // a is renamed, and c comes in under a's old alias (one reload).
    const full = JSON.parse(readFileSync(ownFile, 'utf8')) as Json;
    const servers = {
      b: stdioFixture({ FIXTURE_NAME: 'fixture-b' }),
      a: stdioFixture({ FIXTURE_NAME: 'fixture-a' }, { alias: 'new' }),
      c: stdioFixture({ FIXTURE_NAME: 'fixture-c' }, { alias: 'old' }),
    };
    writeFileSync(ownFile, JSON.stringify({ ...full, mcpServers: servers }, null, 2));
    const statsTools = async () => (await own.client.listTools()).tools.filter((t) => t.name.includes('stats')).length;
    await eventually(async () => (await uris()).includes(`switchboard://new/${HELLO_URI}`) && (await statsTools()) === 3, 20_000, 'a renamed and c listed');
    expect(await uris()).not.toContain(oldHello);

    // A host that remembers a's old URI still reads a's hello, not c's.
    const read = await own.client.readResource({ uri: oldHello });
    expect((read.contents[0] as Json).text).toBe('Hello from fixture-a');
    // And a's old tool name is no one's now: unknown, not c's tool.
    const unknown = await failure(call('old__env'));
    expect({ code: unknown.code, message: unknown.message }).toEqual({ code: -32602, message: expect.stringContaining('Unknown tool: old__env') });
    const tools = (await own.client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('new__env');
    const cEnv = tools.find((t) => t.startsWith('old__env_'));
    expect(cEnv).toBeDefined();
    expect(((await call(cEnv!)).content as Json[])[0]?.text).toBe('fixture-c');
  });
});
