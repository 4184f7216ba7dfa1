import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { relayHost, type ClientCapabilities } from './support/hosts.js';
import { rawHost } from './support/raw-host.js';
import type { Client } from '@modelcontextprotocol/client';
import { EVERYTHING_SERVER, eventually, everythingOverHttp, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';

type ToolResult = { content: { type: string; text?: string }[]; isError?: boolean };

const everythingStdio = { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] };

/** A host that declares `capabilities` and answers sampling and elicitation as `who`. */
const host = (daemon: DaemonHandle, who: string, capabilities: ClientCapabilities) =>
  relayHost(daemon, `host-${who}`, capabilities, {
    sampling: () => ({ role: 'assistant', content: { type: 'text', text: `sampled by ${who}` }, model: `model-of-${who}`, stopReason: 'endTurn' }),
    elicitation: () => ({ action: 'accept', content: { name: `name from ${who}` } }),
  });
/** What a host was asked, as text to search. */
const said = (asked: Record<string, unknown>[]) => asked.map((p) => JSON.stringify(p));

const textOf = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');

afterAll(stopAllDaemons);

describe('a sampling request the gateway changes on its way to the host', () => {
  it("records what the host was sent beside what the upstream asked: the cap on maxTokens, includeContext as none", async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    writeFileSync(join(dir, 'policy.yaml'), 'everyone: [sampler]\nroles:\n  sampler:\n    - { id: sampling-ok, allow: sample, server: everything }\n');
    const daemon = await startDaemon(
      writeConfig({ policy: { file: join(dir, 'policy.yaml') }, relay: { inbox: false, maxSamplingTokens: 10 }, mcpServers: { everything: everythingStdio } }, dir),
    );
    const { client, asked } = await host(daemon, 'capped', { sampling: {} });
    try {
      await eventually(async () => (await client.listTools()).tools.some((t) => t.name === 'everything__trigger-sampling-request'));
      expect(textOf(await client.callTool({ name: 'everything__trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 50 } }))).toContain('sampled by capped');
      expect(asked[0]).toMatchObject({ maxTokens: 10 });
      const row = await eventually(() => auditRows(dataDir, "method = 'sampling/createMessage'")[0]);
      const details = JSON.parse(String(row.arguments)) as { request: { maxTokens: number }; sentToHost?: Record<string, unknown> };
      expect(details.request.maxTokens).toBe(50);
      expect(details.sentToHost).toEqual({ maxTokens: 10 });
    } finally {
      await client.close();
    }
  });
});

describe('sampling and elicitation relayed to the host that caused them (stdio upstream)', () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  let policyFile: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, 'roles: {}\n');
    // Without the inbox, what no host can take is refused at once (relay-inbox.e2e-spec.ts has the inbox).
    daemon = await startDaemon(writeConfig({ policy: { file: policyFile }, relay: { inbox: false }, mcpServers: { everything: everythingStdio } }, dir));
  });
  afterAll(async () => Promise.all(clients.map((c) => c.close().catch(() => undefined))));

  it('refuses sampling by default, and relays it once a policy rule allows it', async () => {
    const { client, asked } = await host(daemon, 'alice', { sampling: {} });
    clients.push(client);
    await eventually(async () => (await client.listTools()).tools.some((t) => t.name === 'everything__trigger-sampling-request'));
    const refused = await client
      .callTool({ name: 'everything__trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 50 } })
      .then(textOf, (e: Error) => e.message);
    expect(refused).toContain('Sampling is not allowed');
    expect(asked).toEqual([]);

    writeFileSync(policyFile, 'everyone: [sampler]\nroles:\n  sampler:\n    - { id: sampling-ok, allow: sample, server: everything }\n');
    const answer = await eventually(async () => {
      const text = await client
        .callTool({ name: 'everything__trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 50 } })
        .then(textOf, (e: Error) => e.message);
      return text.includes('sampled by alice') ? text : undefined;
    }, 10_000);
    expect(answer).toContain('model-of-alice');
    expect(said(asked).some((a) => a.includes('hello'))).toBe(true);

    const rows = auditRows(dataDir).filter((r) => r.method === 'sampling/createMessage');
    expect(rows.some((r) => r.decision === 'denied' && r.upstream === 'everything')).toBe(true);
    const ok = rows.find((r) => r.decision === 'allowed');
    expect(ok).toMatchObject({ rule: 'sampling-ok', outcome: 'ok', principal: 'anonymous', client_name: 'host-alice' });
    expect(String(ok!.arguments)).toContain('sampled by alice');
  });

  it('relays a form elicitation to a host that takes forms, and never to a url-only host', async () => {
    const form = await host(daemon, 'bob', { elicitation: { form: {} } });
    const urlOnly = await host(daemon, 'carol', { elicitation: { url: {} } });
    clients.push(form.client, urlOnly.client);
    const name = 'everything__trigger-elicitation-request';
    await eventually(async () => (await form.client.listTools()).tools.some((t) => t.name === name));

    const accepted = textOf(await form.client.callTool({ name, arguments: {} }));
    expect(form.asked).toHaveLength(1);
    expect(accepted).toContain('name from bob');

    const refused = await urlOnly.client.callTool({ name, arguments: {} }).then(textOf, (e: Error) => e.message);
    expect(urlOnly.asked).toEqual([]);
    expect(refused).not.toContain('name from');
    const row = auditRows(dataDir).find((r) => r.method === 'elicitation/create' && r.client_name === 'host-carol');
    expect(row).toMatchObject({ decision: 'refused', rule: 'relay:host-lacks-capability', error_code: -32602, name: 'form' });
  });
});

describe('a raw Streamable HTTP host that never opens the GET stream (stdio upstream)', () => {
  let daemon: DaemonHandle;
  let dataDir: string;

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    const mcpServers = { everything: everythingStdio, mine: { ...everythingStdio, isolation: 'per-session' } };
    daemon = await startDaemon(writeConfig({ relay: { inbox: false }, mcpServers }, dir));
  });

  it("refuses at once, and records why, a question from its own connection that it has no stream for", async () => {
    const host = await rawHost(daemon, { roots: {} });
    try {
      // The session's first call opens its connection; server-everything then asks for the
      // host's roots on its own (350 ms after initialize), with nothing in flight.
      const echo = host.post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'mine__echo', arguments: { message: 'hi' } } });
      await echo.ended;
      expect(JSON.stringify(echo.messages)).toContain('hi');
      // (The connection the gateway reads the lists through asks too, for nobody: not this row.)
      const row = await eventually(() => auditRows(dataDir, "method = 'roots/list' AND upstream = 'mine' AND session_id IS NOT NULL")[0], 10_000, 'the roots/list row');
      expect(row).toMatchObject({ decision: 'refused', rule: 'relay:host-unreachable', error_code: -32602 });
      expect(String(row.error_message)).toContain('no open stream');
    } finally {
      await host.close();
    }
  });

  it('gets a question asked while two of its calls are in flight on one of their POST streams, and both calls end', async () => {
    const host = await rawHost(daemon, { elicitation: { form: {} } });
    const name = 'everything__trigger-elicitation-request';
    try {
      await eventually(async () => {
        const list = host.post({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
        await list.ended;
        return JSON.stringify(list.messages).includes(name);
      });
      const call = (id: number) => host.post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
      const one = call(1);
      const first = await host.waitFor([one], (m) => m.method === 'elicitation/create');
      // The stdio upstream cannot say which of the two calls asks the second question.
      const two = call(2);
      const second = await host.waitFor([one, two], (m) => m.method === 'elicitation/create' && m.id !== first.id);
      for (const question of [first, second]) {
        expect(await host.post({ jsonrpc: '2.0', id: question.id, result: { action: 'decline' } }).status).toBe(202);
      }
      const results = await Promise.all([1, 2].map((id) => host.waitFor([one, two], (m) => m.id === id && 'result' in m)));
      for (const result of results) expect(JSON.stringify(result)).toContain('declined');
    } finally {
      await host.close();
    }
  });
});

describe('two hosts calling one Streamable HTTP upstream at once', () => {
  let upstream: ChildProcess;
  let daemon: DaemonHandle;

  beforeAll(async () => {
    let url: string;
    ({ proc: upstream, url } = await everythingOverHttp());
    const dir = tempDir();
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, 'everyone: [sampler]\nroles:\n  sampler:\n    - { allow: sample, server: remote }\n');
    daemon = await startDaemon(writeConfig({ policy: { file: policyFile }, mcpServers: { remote: { url } } }, dir));
  });
  afterAll(() => upstream?.kill());

  it('gives each host only its own sampling requests', async () => {
    const a = await host(daemon, 'a', { sampling: {} });
    const b = await host(daemon, 'b', { sampling: {} });
    try {
      const name = 'remote__trigger-sampling-request';
      await eventually(async () => (await a.client.listTools()).tools.some((t) => t.name === name));
      const calls = Array.from({ length: 6 }, (_, i) => {
        const [who, h] = i % 2 === 0 ? (['a', a] as const) : (['b', b] as const);
        return h.client.callTool({ name, arguments: { prompt: `from-${who}-${i}`, maxTokens: 20 } }).then((r) => [who, textOf(r)] as const);
      });
      for (const [who, text] of await Promise.all(calls)) expect(text).toContain(`sampled by ${who}`);
      expect(said(a.asked).every((q) => q.includes('from-a-'))).toBe(true);
      expect(said(b.asked).every((q) => q.includes('from-b-'))).toBe(true);
      expect(a.asked).toHaveLength(3);
      expect(b.asked).toHaveLength(3);
    } finally {
      await Promise.all([a.client.close(), b.client.close()]);
    }
  });
});
