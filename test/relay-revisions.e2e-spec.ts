import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { relayHost, type ClientCapabilities } from './support/hosts.js';
import { answerItem, pendingItem } from './support/inbox-client.js';

type Params = Record<string, unknown>;
type ToolResult = { content: { type: string; text?: string }[]; isError?: boolean };

const textOf = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');
/** The text a host sampled, from fx__ask_client's answer (the CreateMessageResult as JSON). */
const sampledText = (r: unknown) => (JSON.parse(textOf(r)) as { content: { text: string } }).content.text;

/** A 2025-11-25 form: `mode`, `$schema`, a default on a string and a titled choice are all of that revision. */
const FORM = {
  mode: 'form',
  message: 'Which colour?',
  requestedSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      colour: { type: 'string', title: 'Colour', oneOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }], default: 'r' },
      note: { type: 'string', default: 'none' },
    },
    required: ['colour'],
  },
};

/** Sampling with one message of two blocks (a list is 2025-11-25), one of them audio (2025-03-26). */
const SAMPLE = {
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Transcribe:' }, { type: 'audio', data: 'AA==', mimeType: 'audio/wav' }] }],
  maxTokens: 20,
};

afterAll(stopAllDaemons);

/**
 * The real daemon between a fixture upstream that asks its client what a 2025-11-25 server
 * may ask (fx__ask_client sends the params as given, during the call) and real SDK hosts
 * pinned to older revisions: each host gets the request as its revision defines it, or,
 * when its revision cannot carry it, is not asked at all (the inbox or a refusal instead).
 */
describe("requests relayed to a host take the shape of the host's revision", () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(policyFile, 'everyone: [sampler]\nroles:\n  sampler:\n    - { id: sampling-ok, allow: sample, server: fx }\n');
    daemon = await startDaemon(writeConfig({ log: { level: 'info' }, policy: { file: policyFile }, mcpServers: { fx: stdioFixture() } }, dir));
  });
  afterAll(async () => Promise.all(clients.map((c) => c.close().catch(() => undefined))));

  /** A host on `version` declaring `capabilities`, answering forms and samples; it remembers what it was asked. */
  async function host(name: string, version: string, capabilities: ClientCapabilities) {
    const h = await relayHost(
      daemon,
      name,
      capabilities,
      {
        elicitation: () => ({ action: 'accept', content: { colour: 'g' } }),
        sampling: (p) => ({ role: 'assistant', content: { type: 'text', text: `heard ${(p.messages as unknown[]).length} messages` }, model: 'm' }),
      },
      version,
    );
    clients.push(h.client);
    await eventually(async () => (await h.client.listTools()).tools.some((t) => t.name === 'fx__ask_client'));
    return h;
  }
  const ask = (client: Client, method: string, params: Params) => client.callTool({ name: 'fx__ask_client', arguments: { method, params } }) as Promise<ToolResult>;

  it('2025-11-25: the form and the sample arrive exactly as the upstream sent them', async () => {
    const { client, asked } = await host('newest', '2025-11-25', { elicitation: { form: {} }, sampling: {} });
    expect(JSON.parse(textOf(await ask(client, 'elicitation/create', FORM)))).toEqual({ action: 'accept', content: { colour: 'g' } });
    expect(sampledText(await ask(client, 'sampling/createMessage', SAMPLE))).toBe('heard 1 messages');
    expect(asked).toEqual([FORM, SAMPLE]);
  });

  it('2025-06-18: the form comes without mode, $schema and defaults, its titled choice as enum and enumNames', async () => {
    const { client, asked } = await host('june', '2025-06-18', { elicitation: { form: {} } });
    expect(JSON.parse(textOf(await ask(client, 'elicitation/create', FORM)))).toEqual({ action: 'accept', content: { colour: 'g' } });
    expect(asked).toEqual([
      {
        message: 'Which colour?',
        requestedSchema: {
          type: 'object',
          properties: { colour: { type: 'string', title: 'Colour', enum: ['r', 'g'], enumNames: ['Red', 'Green'] }, note: { type: 'string' } },
          required: ['colour'],
        },
      },
    ]);
  });

  it('2025-06-18: a url-mode elicitation is not sent to the host (its revision has none) but waits in the inbox', async () => {
    const { client, asked } = await host('june-url', '2025-06-18', { elicitation: { form: {}, url: {} } });
    const url = { mode: 'url', message: 'Sign in', url: 'https://auth.example.com/start', elicitationId: 'e-1' };
    const call = ask(client, 'elicitation/create', url);
    const item = await pendingItem(daemon, (i) => i.kind === 'elicitation' && i.mode === 'url');
    expect(await answerItem(daemon, item.id, { action: 'decline' })).toMatchObject({ status: 204 });
    expect(JSON.parse(textOf(await call))).toEqual({ action: 'decline' });
    expect(asked).toEqual([]);
  });

  it('2025-03-26: a host that declares elicitation is not asked (the method came with 2025-06-18); the inbox is', async () => {
    const { client, asked } = await host('march', '2025-03-26', { elicitation: { form: {} }, sampling: {} });
    const call = ask(client, 'elicitation/create', FORM);
    const item = await pendingItem(daemon, (i) => i.kind === 'elicitation' && i.message === 'Which colour?');
    expect(await answerItem(daemon, item.id, { action: 'accept', content: { colour: 'r' } })).toMatchObject({ status: 204 });
    expect(JSON.parse(textOf(await call))).toEqual({ action: 'accept', content: { colour: 'r' } });
    expect(asked).toEqual([]);
    expect(auditRows(dataDir, "method = 'elicitation/create' AND client_name = 'march'")[0]).toMatchObject({ decision: 'allowed', rule: 'relay:inbox' });
    // Why its own host was not asked: in the log, for whoever wonders why the host's call waits.
    await daemon.waitForLog((line) => line.includes('a relayed request waits in the inbox') && line.includes('speaks MCP 2025-03-26, which has no elicitation/create'));

    // Sampling it has: one block a message, and audio (2025-03-26) kept.
    expect(sampledText(await ask(client, 'sampling/createMessage', SAMPLE))).toBe('heard 2 messages');
    expect(asked).toEqual([{ ...SAMPLE, messages: SAMPLE.messages[0].content.map((content) => ({ role: 'user', content })) }]);
  });

  it('2024-11-05: audio in a sample becomes a text block that says what it was', async () => {
    const { client, asked } = await host('november', '2024-11-05', { sampling: {} });
    expect(sampledText(await ask(client, 'sampling/createMessage', SAMPLE))).toBe('heard 2 messages');
    const messages = asked[0].messages as Params[];
    expect(messages[1]).toEqual({ role: 'user', content: { type: 'text', text: expect.stringMatching(/audio content \(audio\/wav\) omitted/) } });
  });

  it('2025-06-18: sampling with tools is refused, not sent without them, though the host declared sampling.tools', async () => {
    const { client, asked } = await host('june-tools', '2025-06-18', { sampling: { tools: {} } });
    const tools = [{ name: 'lookup', inputSchema: { type: 'object' } }];
    const refused = await ask(client, 'sampling/createMessage', { ...SAMPLE, tools });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('speaks MCP 2025-06-18, which has no tool use in sampling');
    expect(asked).toEqual([]);
    const row = auditRows(dataDir, "method = 'sampling/createMessage' AND client_name = 'june-tools'")[0];
    expect(row).toMatchObject({ decision: 'refused', rule: 'relay:host-revision', error_code: -32602 });
  });
});
