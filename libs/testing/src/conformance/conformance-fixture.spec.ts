import { existsSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conformanceFixturePath, startConformanceHttpFixture, type HttpFixture } from '../fixture-process.js';
import { createConformanceServer, WATCHED_URI } from './conformance-server.js';
import { InMemoryEventStore } from './event-store.js';

// What the conformance suite cannot reach in the fixture: its own replay machinery, the
// stream closing of test_reconnection (the suite's request declares a revision without
// priming events), and resource update notifications (the suite only subscribes).

const message = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: {} });

describe('InMemoryEventStore', () => {
  it('replays what followed an event on its stream only, priming events left out', async () => {
    const store = new InMemoryEventStore();
    const priming = await store.storeEvent('a', {} as JSONRPCMessage);
    const first = await store.storeEvent('a', message(1));
    await store.storeEvent('b', message(9));
    await store.storeEvent('a', message(2));
    await store.storeEvent('a', {} as JSONRPCMessage);
    await store.storeEvent('a', message(3));

    const replayed: Array<[string, JSONRPCMessage]> = [];
    const stream = await store.replayEventsAfter(priming, { send: async (id, m) => void replayed.push([id, m]) });
    expect(stream).toBe('a');
    expect(replayed.map(([, m]) => (m as { id: number }).id)).toEqual([1, 2, 3]);
    expect(await store.getStreamIdForEventId(first)).toBe('a');

    const afterFirst: number[] = [];
    await store.replayEventsAfter(first, { send: async (_id, m) => void afterFirst.push((m as { id: number }).id) });
    expect(afterFirst).toEqual([2, 3]);
  });

  it('refuses an event id it never issued', async () => {
    const store = new InMemoryEventStore();
    await expect(store.replayEventsAfter('nope_1', { send: async () => undefined })).rejects.toThrow(/Unknown event id/);
    expect(await store.getStreamIdForEventId('garbage')).toBeUndefined();
  });

  it('keeps at most maxEventsPerStream events per stream', async () => {
    const store = new InMemoryEventStore(2);
    const ids = [];
    for (let i = 1; i <= 4; i++) ids.push(await store.storeEvent('s', message(i)));
    const replayed: number[] = [];
    await store.replayEventsAfter(ids[2]!, { send: async (_id, m) => void replayed.push((m as { id: number }).id) });
    expect(replayed).toEqual([4]);
  });
});

describe('conformance fixture in process', () => {
  it('update_watched_resource notifies a subscriber, and nobody after unsubscribe', async () => {
    const server = createConformanceServer();
    const client = new Client({ name: 'spec', version: '1' });
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    await client.connect(b);

    await client.subscribeResource({ uri: WATCHED_URI });
    await client.callTool({ name: 'update_watched_resource', arguments: { text: 'first' } });
    expect(updates).toEqual([WATCHED_URI]);
    const read = await client.readResource({ uri: WATCHED_URI });
    expect(read.contents[0]).toMatchObject({ text: 'first' });

    await client.unsubscribeResource({ uri: WATCHED_URI });
    await client.callTool({ name: 'update_watched_resource', arguments: { text: 'second' } });
    expect(updates).toEqual([WATCHED_URI]);
    expect((await client.readResource({ uri: WATCHED_URI })).contents[0]).toMatchObject({ text: 'second' });
    await client.close();
  });
});

describe('conformance fixture over Streamable HTTP', () => {
  let fixture: HttpFixture;
  beforeAll(async () => {
    if (!existsSync(conformanceFixturePath('http'))) throw new Error('run "npx tsc -b libs/testing" first');
    fixture = await startConformanceHttpFixture();
  });
  afterAll(() => fixture?.stop());

  it('test_reconnection closes its stream mid-call; the client resumes and still gets the answer', async () => {
    const client = new Client({ name: 'spec', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
    const result = await client.callTool({ name: 'test_reconnection', arguments: {} });
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('closed mid-call') });
    await client.close();
  });

  it('refuses a foreign Host header with 403 (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(fixture.url, { method: 'POST', headers: { Host: 'evil.example.com', 'Content-Type': 'application/json' } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(403);
  });
});
