import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { createDemoServer } from './demo-server.js';

const clients: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
});

async function connectInMemory(): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createDemoServer().connect(serverSide);
  const client = new Client({ name: 'demo-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(clientSide);
  return client;
}

function firstText(result: { content: { type: string; text?: string }[] }): string | undefined {
  return result.content[0]?.text;
}

describe('demo upstream', () => {
  it('offers its tools, resource and prompt under the name switchboard-demo', async () => {
    const client = await connectInMemory();
    expect(client.getServerVersion()?.name).toBe('switchboard-demo');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo', 'add', 'current_time', 'random_number']);
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toEqual(['demo://readme']);
    const readme = (await client.readResource({ uri: 'demo://readme' })).contents[0];
    expect(readme && 'text' in readme && readme.text).toContain('Switchboard');
    const prompt = await client.getPrompt({ name: 'summarize', arguments: { text: 'A long story.' } });
    expect(prompt.messages[0]?.content).toMatchObject({ type: 'text', text: expect.stringContaining('A long story.') });
  });

  it('echoes, adds and tells the time', async () => {
    const client = await connectInMemory();
    expect(firstText(await client.callTool({ name: 'echo', arguments: { text: 'hello' } }))).toBe('hello');
    expect((await client.callTool({ name: 'add', arguments: { a: 1.5, b: 2 } })).structuredContent).toEqual({ sum: 3.5 });
    const utc = await client.callTool({ name: 'current_time', arguments: {} });
    expect(utc.structuredContent).toMatchObject({ timezone: 'UTC', iso: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    const tokyo = await client.callTool({ name: 'current_time', arguments: { timezone: 'Asia/Tokyo' } });
    expect(firstText(tokyo)).toMatch(/\+09:00$/);
    const unknown = await client.callTool({ name: 'current_time', arguments: { timezone: 'Nowhere/Land' } });
    expect(unknown.isError).toBe(true);
    expect(firstText(unknown)).toContain('Nowhere/Land');
  });

  it('draws random integers within the bounds and refuses inverted ones', async () => {
    const client = await connectInMemory();
    const values = new Set<unknown>();
    for (let i = 0; i < 40; i++) {
      const result = await client.callTool({ name: 'random_number', arguments: { min: 1, max: 3 } });
      values.add((result.structuredContent as { value: number }).value);
    }
    expect([...values].sort()).toEqual([1, 2, 3]);
    expect((await client.callTool({ name: 'random_number', arguments: { min: 5, max: 5 } })).structuredContent).toEqual({ value: 5 });
    expect((await client.callTool({ name: 'random_number', arguments: { min: 3, max: 1 } })).isError).toBe(true);
  });

  // The built entrypoint is what config/default.yaml runs: check it serves both eras over stdio.
  const mainJs = fileURLToPath(new URL('../dist/main.js', import.meta.url));
  it.each(['legacy', 'auto'] as const)('serves %s version negotiation from dist/main.js over stdio', async (mode) => {
    if (!existsSync(mainJs)) throw new Error(`${mainJs} is not built: run "npx tsc -b apps/demo-upstream" first`);
    const client = new Client({ name: 'demo-test', version: '1.0.0' }, { versionNegotiation: { mode } });
    clients.push(client);
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [mainJs], stderr: 'pipe' }));
    expect(client.getProtocolEra()).toBe(mode === 'auto' ? 'modern' : 'legacy');
    expect(firstText(await client.callTool({ name: 'echo', arguments: { text: mode } }))).toBe(mode);
  });
});
