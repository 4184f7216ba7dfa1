import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { relayHost } from './support/hosts.js';

type ToolResult = { content: { type: string; text?: string }[]; isError?: boolean };
const textOf = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');

/** A form of one string field `code` with `pattern`. */
const form = (pattern: string) => ({
  message: 'Which code?',
  requestedSchema: { type: 'object', properties: { code: { type: 'string', pattern } }, required: ['code'] },
});

afterAll(stopAllDaemons);

/**
 * The real daemon between the fixture upstream, whose ask_client sends the form it is given,
 * and a real SDK host that answers it: a form's `pattern` is checked by the gateway's own
 * linear-time matcher (ADR 011), on the host's answer as on the inbox's.
 */
describe("an elicitation form's pattern", () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  let client: Client;
  let asked: unknown[];
  /** What the host answers as `code` to the next form. */
  let code = '';

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    daemon = await startDaemon(writeConfig({ mcpServers: { fx: stdioFixture() } }, dir));
    ({ client, asked } = await relayHost(daemon, 'answerer', { elicitation: { form: {} } }, { elicitation: () => ({ action: 'accept', content: { code } }) }));
    await eventually(async () => (await client.listTools()).tools.some((t) => t.name === 'fx__ask_client'));
  });
  afterAll(async () => client.close().catch(() => undefined));

  const ask = (params: unknown) => client.callTool({ name: 'fx__ask_client', arguments: { method: 'elicitation/create', params } }) as Promise<ToolResult>;

  it("passes a host's answer that matches, and refuses one a backtracking engine would take for ever on, with its reason", async () => {
    code = '1234';
    expect(JSON.parse(textOf(await ask(form('^[0-9]{4}$'))))).toEqual({ action: 'accept', content: { code: '1234' } });
    code = `${'a'.repeat(40)}!`;
    const refused = await ask(form('^(a+)+$'));
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('content: code must match the pattern ^(a+)+$');
  });

  it('asks a form whose pattern the linear-time matcher does not run, and leaves the answer to the upstream', async () => {
    const before = asked.length;
    code = 'Secret123';
    const password = '^(?=.*[A-Z])(?=.*\\d).{8,}$';
    expect(JSON.parse(textOf(await ask(form(password))))).toEqual({ action: 'accept', content: { code: 'Secret123' } });
    expect(asked.length).toBe(before + 1);
    expect(auditRows(dataDir, "method = 'elicitation/create' AND rule = 'relay:invalid-schema'")).toEqual([]);
  });
});
