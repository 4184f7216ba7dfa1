import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { Inbox, type InboxQuestion } from '@switchboard/inbox';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InboxEventStreams, MAX_STREAMS_PER_PRINCIPAL, MAX_UNREAD_BYTES } from './inbox-events.js';

/** An approval whose arguments weigh about `bytes`. */
const bigApproval = (principal: string, bytes: number): InboxQuestion => ({
  kind: 'approval',
  tool: 'fs__write_file',
  arguments: { content: 'x'.repeat(bytes) },
  argumentsDigest: 'd',
  rule: 'ask',
  rememberChoicesMs: [],
  server: 'fs',
  principal,
  timeoutMs: 60_000,
});

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

/** A real HTTP server whose every request opens an event stream for the principal in the `x-principal` header. */
async function serve(inbox: Inbox) {
  const streams = new InboxEventStreams();
  const responses: ServerResponse[] = [];
  const server = createServer((req, res) => {
    responses.push(res);
    streams.start(res, { inbox, viewer: { principal: String(req.headers['x-principal']), admin: false }, session: false, lapse: async () => undefined });
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  server.on('connection', (socket) => sockets.push(socket));
  return { streams, responses, port: (server.address() as AddressInfo).port };
}

/** Opens a stream that is read, and collects its event names and data. */
function follow(port: number, principal: string) {
  return new Promise<{ events: { event: string; data: any }[]; ended: Promise<void> }>((resolve, reject) => {
    const req = httpRequest({ port, host: '127.0.0.1', path: '/events', headers: { 'x-principal': principal } }, (res: IncomingMessage) => {
      const events: { event: string; data: any }[] = [];
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end; (end = buffer.indexOf('\n\n')) !== -1; buffer = buffer.slice(end + 2)) {
          const block = buffer.slice(0, end);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) });
        }
      });
      const ended = new Promise<void>((done) => res.on('end', done));
      resolve({ events, ended });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('inbox event streams', () => {
  it('closes a stream its reader stopped reading, once more than MAX_UNREAD_BYTES wait for it', async () => {
    const inbox = new Inbox();
    const { streams, responses, port } = await serve(inbox);
    // A reader that sends its request and never reads a byte of the answer.
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    socket.pause();
    socket.write('GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nx-principal: bob\r\n\r\n');
    await vi.waitFor(() => expect(responses).toHaveLength(1));
    const [res] = responses;
    const closed = new Promise<void>((done) => res.once('close', done));

    const itemBytes = 1024 * 1024;
    let mostUnread = 0;
    let asked = 0;
    // Far more than the bound plus what the kernel's socket buffers can hold.
    while (!res.destroyed && asked < 48) {
      void inbox.ask(bigApproval('bob', itemBytes)).catch(() => undefined);
      asked++;
      mostUnread = Math.max(mostUnread, res.writableLength);
      await new Promise((done) => setImmediate(done));
    }
    expect(res.destroyed).toBe(true);
    await closed;
    // The check comes before a write: at most one event past the bound was ever queued.
    expect(mostUnread).toBeLessThanOrEqual(MAX_UNREAD_BYTES + itemBytes + 4096);
    expect(streams.count).toBe(0);
    inbox.withdrawAll();
  });

  it(`keeps at most ${MAX_STREAMS_PER_PRINCIPAL} streams per principal: one more ends that principal's oldest with a 'closed' event`, async () => {
    const inbox = new Inbox();
    const { streams, port } = await serve(inbox);
    const bob = await follow(port, 'bob');
    const alice: Awaited<ReturnType<typeof follow>>[] = [];
    for (let i = 0; i < MAX_STREAMS_PER_PRINCIPAL; i++) alice.push(await follow(port, 'alice'));
    await vi.waitFor(() => expect(streams.count).toBe(MAX_STREAMS_PER_PRINCIPAL + 1));

    alice.push(await follow(port, 'alice'));
    await alice[0].ended;
    expect(alice[0].events.at(-1)).toEqual({ event: 'closed', data: { reason: `the inbox is open in more than ${MAX_STREAMS_PER_PRINCIPAL} places for alice` } });
    await vi.waitFor(() => expect(streams.count).toBe(MAX_STREAMS_PER_PRINCIPAL + 1));

    // The others, and bob's, still follow the inbox.
    void inbox.ask(bigApproval('alice', 10)).catch(() => undefined);
    void inbox.ask(bigApproval('bob', 10)).catch(() => undefined);
    for (const stream of [...alice.slice(1), bob]) await vi.waitFor(() => expect(stream.events.map((e) => e.event)).toEqual(['snapshot', 'added']));
    expect(bob.events[1].data.item.principal).toBe('bob');
    inbox.withdrawAll();
  });
});
