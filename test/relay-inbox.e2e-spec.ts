import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { EVERYTHING_SERVER, eventually, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { connectHost, relayHost, type ClientCapabilities } from './support/hosts.js';
import { answerItem, inboxItems, pendingItem } from './support/inbox-client.js';
import { openStream, type OpenStream } from './support/sse-client.js';

type ToolResult = { content: { type: string; text?: string }[] };

const textOf = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');
const FORM_TOOL = 'everything__trigger-elicitation-request';
const URL_TOOL = 'everything__trigger-url-elicitation';

/** A host declaring `capabilities` that accepts every elicitation, or answers with `answer`. */
const host = (daemon: DaemonHandle, name: string, capabilities: ClientCapabilities, answer: () => Promise<Record<string, unknown>> = async () => ({ action: 'accept' })) =>
  relayHost(daemon, name, capabilities, { elicitation: answer });

afterAll(stopAllDaemons);

describe('elicitations no host can take wait in the inbox; URL mode; timeouts', () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    daemon = await startDaemon(
      writeConfig({ relay: { timeoutMs: 3000 }, mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] } } }, dir),
    );
  });
  afterAll(async () => Promise.all(clients.map((c) => c.close().catch(() => undefined))));

  it('puts a form elicitation from a host without the capability in the inbox, checks the answer, and relays it', async () => {
    const { client } = await host(daemon, 'no-elicitation', {});
    clients.push(client);
    await eventually(async () => (await client.listTools()).tools.some((t) => t.name === FORM_TOOL));
    const call = client.callTool({ name: FORM_TOOL, arguments: {} }).then(textOf);
    const item = await pendingItem(daemon, (i) => i.kind === 'elicitation');
    expect(item).toMatchObject({ mode: 'form', server: 'everything', principal: 'loopback:anonymous', message: 'Please provide inputs for the following fields:' });
    expect((item.requestedSchema as { required: string[] }).required).toEqual(['name']);
    expect(Number(item.expiresAt) - Number(item.createdAt)).toBe(3000);

    const bad = await answerItem(daemon, item.id, { action: 'accept', content: { integer: 500, email: 'nope' } });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.problems).toEqual(['name is required', 'email must be a valid email', 'integer must be at most 100']);
    expect(await answerItem(daemon, item.id, { action: 'accept', content: { name: 'Dana Inbox', integer: 7 } })).toMatchObject({ status: 204 });
    const text = await call;
    expect(text).toContain('Name: Dana Inbox');
    expect(text).toContain('Favorite Integer: 7');

    const row = auditRows(dataDir, "method = 'elicitation/create' AND client_name = 'no-elicitation'")[0];
    expect(row).toMatchObject({ decision: 'allowed', rule: 'relay:inbox', outcome: 'ok', name: 'form' });
    expect(JSON.parse(String(row.arguments))).toMatchObject({ answeredBy: 'loopback:anonymous', answer: { action: 'accept' } });
  });

  it('never sends a form request to a url-only host (the inbox takes it), and relays url mode to it', async () => {
    const urlOnly = await host(daemon, 'url-only', { elicitation: { url: {} } });
    clients.push(urlOnly.client);
    await eventually(async () => (await urlOnly.client.listTools()).tools.some((t) => t.name === URL_TOOL));
    const formCall = urlOnly.client.callTool({ name: FORM_TOOL, arguments: {} }).then(textOf);
    const item = await pendingItem(daemon, (i) => i.kind === 'elicitation' && i.mode === 'form');
    await answerItem(daemon, item.id, { action: 'decline' });
    expect(await formCall).toContain('declined');

    const url = 'https://auth.example.com/consent?state=abc';
    const text = textOf(await urlOnly.client.callTool({ name: URL_TOOL, arguments: { url, elicitationId: 'elic-1' } }));
    expect(text).toContain('completed the URL elicitation flow');
    expect(urlOnly.asked).toEqual([{ mode: 'url', url, message: expect.any(String), elicitationId: 'elic-1' }]);
  });

  it('passes -32042 (URL elicitation required) through to the caller with its elicitations', async () => {
    const { client } = await host(daemon, 'url-error', { elicitation: { url: {} } });
    clients.push(client);
    const error = await client.callTool({ name: URL_TOOL, arguments: { url: 'https://x.example/', errorPath: true } }).then(
      () => undefined,
      (e: { code?: number; data?: { elicitations?: { mode: string; url: string }[] } }) => e,
    );
    expect(error?.code).toBe(-32042);
    expect(error?.data?.elicitations?.[0]).toMatchObject({ mode: 'url', url: 'https://modelcontextprotocol.io' });
  });

  it('puts a url elicitation for a form-only host in the inbox with its full URL', async () => {
    const { client, asked } = await host(daemon, 'form-only', { elicitation: { form: {} } });
    clients.push(client);
    await eventually(async () => (await client.listTools()).tools.some((t) => t.name === URL_TOOL));
    const url = 'https://login.example.org/device?code=XYZ';
    const call = client.callTool({ name: URL_TOOL, arguments: { url } }).then(textOf);
    const item = await pendingItem(daemon, (i) => i.mode === 'url');
    expect(item).toMatchObject({ url, elicitationId: expect.any(String) });
    expect(await answerItem(daemon, item.id, { action: 'accept', content: { x: 1 } })).toMatchObject({ status: 400 });
    await answerItem(daemon, item.id, { action: 'accept' });
    expect(await call).toContain('completed the URL elicitation flow');
    expect(asked).toEqual([]);

    // A user is only ever asked to open a web page: javascript:, data: and file: URLs are refused.
    const refused = await client.callTool({ name: URL_TOOL, arguments: { url: "javascript:alert('x')" } }).then(textOf, (e: Error) => e.message);
    expect(refused).toContain('needs an http or https URL');
    expect(await inboxItems(daemon)).toEqual([]);
  });

  it('answers an id that is not valid percent-encoding with the inbox error shape and headers', async () => {
    const res = await fetch(`${daemon.baseUrl}/admin/inbox/items/%E0%A4%A/answer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'decline' }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ error: { message: 'bad request: the path is not valid percent-encoding' } });
  });

  it('keeps at most 8 inbox event streams per principal: a ninth ends the oldest with a closed event', async () => {
    const streams: OpenStream[] = [];
    try {
      for (let i = 0; i < 9; i++) {
        const stream = await openStream(`${daemon.baseUrl}/admin/inbox/events`, { accept: 'text/event-stream' });
        await stream.waitFor(/event: snapshot/);
        streams.push(stream);
      }
      await streams[0].waitFor(/event: closed\ndata: \{"reason":"the inbox is open in more than 8 places for loopback:anonymous"\}/);
      for (const stream of streams.slice(1)) expect(stream.text()).not.toContain('event: closed');
    } finally {
      for (const stream of streams) stream.close();
    }
  });

  it("files a question that either of one user's two hosts may have caused as that user's, not as nobody's", async () => {
    const first = await host(daemon, 'same-user-1', {});
    const second = await host(daemon, 'same-user-2', {});
    clients.push(first.client, second.client);
    await eventually(async () => (await second.client.listTools()).tools.some((t) => t.name === FORM_TOOL));
    const one = first.client.callTool({ name: FORM_TOOL, arguments: {} }).then(textOf);
    const itemOne = await pendingItem(daemon, (i) => i.kind === 'elicitation');
    // Asked while both hosts' calls are in flight on the stdio upstream, which cannot say whose it is.
    const two = second.client.callTool({ name: FORM_TOOL, arguments: {} }).then(textOf);
    const itemTwo = await pendingItem(daemon, (i) => i.kind === 'elicitation' && i.id !== itemOne.id);
    expect([itemOne.principal, itemTwo.principal]).toEqual(['loopback:anonymous', 'loopback:anonymous']);
    for (const item of [itemOne, itemTwo]) expect(await answerItem(daemon, item.id, { action: 'decline' })).toMatchObject({ status: 204 });
    expect(await one).toContain('declined');
    expect(await two).toContain('declined');
    const rows = auditRows(dataDir, "method = 'elicitation/create' AND rule = 'relay:inbox' AND session_id IS NULL");
    expect(rows.map((r) => r.principal)).toEqual(['anonymous']);
  });

  it('has no inbox in switchboard stdio, which serves no page: what the host cannot take is refused at once', async () => {
    const stdio = await connectHost('stdio', { configPath: daemon.configPath });
    try {
      await eventually(async () => (await stdio.client.listTools()).tools.some((t) => t.name === FORM_TOOL));
      const text = await stdio.client.callTool({ name: FORM_TOOL, arguments: {} }).then(textOf, (e: Error) => e.message);
      // Refused, rather than left to expire in an inbox nobody can open ("Nobody answered ...").
      expect(text).toContain('did not declare support for form-mode elicitation');
    } finally {
      await stdio.close();
    }
    expect(await inboxItems(daemon)).toEqual([]);
  });

  it('cleans up a relay nobody answers: the host that stalls, and the inbox item that expires', async () => {
    const stalling = await host(daemon, 'stalling', { elicitation: { form: {} } }, () => new Promise(() => undefined));
    clients.push(stalling.client);
    const stalled = await stalling.client.callTool({ name: FORM_TOOL, arguments: {} }).then(textOf, (e: Error) => e.message);
    expect(stalled).toMatch(/timed out|-32001/i);
    expect(stalling.asked).toHaveLength(1);

    const { client } = await host(daemon, 'nobody-home', {});
    clients.push(client);
    const unanswered = client.callTool({ name: FORM_TOOL, arguments: {} }).then(textOf, (e: Error) => e.message);
    await pendingItem(daemon, (i) => i.kind === 'elicitation');
    expect(await unanswered).toMatch(/Nobody answered the elicitation in the inbox within 3 s|-32001/);
    expect(await inboxItems(daemon)).toEqual([]);

    const rows = auditRows(dataDir, "method = 'elicitation/create' AND client_name IN ('stalling', 'nobody-home')");
    expect(rows.map((r) => [r.client_name, r.rule, r.outcome, r.error_code])).toEqual([
      ['stalling', 'policy:default-allow', 'error', -32001],
      ['nobody-home', 'relay:inbox', 'error', -32001],
    ]);
  });
});
