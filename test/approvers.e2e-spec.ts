import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows } from './support/audit-rows.js';
import { createKey, runCli } from './support/cli.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { relayHost } from './support/hosts.js';
import { answerItem, inboxItems, pendingItem } from './support/inbox-client.js';

type ToolResult = { content: { type: string; text?: string }[] };
const textOf = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');
const failure = (e: unknown) => ({ code: (e as { code?: number }).code, message: String((e as Error).message) });

// Echo needs someone with the lead role; every other fixture tool only the caller's own
// confirmation. The latter matches echo too, and comes later: the sign-off still holds.
const POLICY = `everyone: [dev]
users:
  carol: [lead]
roles:
  dev:
    - { id: fixture, allow: call, server: fix }
    - { id: lead-approves-echo, confirm: call, tool: "fix__echo", approvers: [lead] }
    - { id: own-fix, confirm: call, tool: "fix__*" }
  lead: []
`;

afterAll(stopAllDaemons);

/**
 * docs/approvals.md, "Approvers other than the caller": a confirm rule with `approvers`
 * is answered in the inbox by someone the policy gives one of those roles (or an admin),
 * never by the caller, and never on the caller's own host.
 */
describe('a confirm rule with approvers: someone else approves', () => {
  let daemon: DaemonHandle;
  let dataDir: string;
  let configPath: string;
  const keys: Record<string, string> = {};
  const clients: Client[] = [];
  const as = (name: string) => ({ Authorization: `Bearer ${keys[name]}` });

  /** A host for `name`'s key that can show forms and approves any it is shown. */
  async function host(name: string): Promise<{ client: Client; asked: unknown[] }> {
    const asked: unknown[] = [];
    const client = new Client({ name: `host-${name}`, version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { remember: 'Just this once' } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: as(name) } }));
    clients.push(client);
    return { client, asked };
  }

  beforeAll(async () => {
    const dir = tempDir();
    dataDir = join(dir, 'data');
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    configPath = writeConfig(
      { auth: { mode: 'required' }, policy: { file: join(dir, 'policy.yaml') }, approvals: { timeoutMs: 20_000, rememberMs: [900_000] }, mcpServers: { fix: stdioFixture() } },
      dir,
    );
    for (const [name, roles] of [['alice', undefined], ['dave', undefined], ['carol', undefined], ['erin', 'lead'], ['root', 'admin']] as const) {
      keys[name] = createKey(configPath, name, roles);
    }
    daemon = await startDaemon(configPath);
  });
  afterAll(async () => Promise.all(clients.map((c) => c.close().catch(() => undefined))));

  it("asks an approver in the inbox, not the caller's host; the caller sees it waiting and cannot answer it", async () => {
    const alice = await host('alice');
    const call = alice.client.callTool({ name: 'fix__echo', arguments: { text: 'deploy v2' } }).then(textOf);
    const mine = await pendingItem(daemon, (i) => JSON.stringify(i.arguments).includes('deploy v2'), as('alice'));
    expect(mine).toMatchObject({ kind: 'approval', principal: 'alice', approvers: ['lead'], answerable: false });
    expect(alice.asked).toEqual([]);

    const own = await answerItem(daemon, mine.id, { action: 'approve' }, as('alice'));
    expect(own.status).toBe(403);
    expect(JSON.parse(own.body).error.problems).toEqual(["this is your own call; rule 'lead-approves-echo' needs someone else with role lead to approve it"]);
    // The four-eyes check held, and the log shows it was tried.
    const tried = await eventually(() => auditRows(dataDir, "rule = 'inbox:own-approval'")[0]);
    expect(tried).toMatchObject({ method: 'http', decision: 'denied', principal: 'alice', error_message: expect.stringContaining("an answer to alice's own call, which someone else must approve") });
    // Someone with neither the role nor admin does not see it at all.
    expect(await inboxItems(daemon, as('dave'))).toEqual([]);
    expect((await answerItem(daemon, mine.id, { action: 'approve' }, as('dave'))).status).toBe(404);

    const carols = await inboxItems(daemon, as('carol'));
    expect(carols).toEqual([expect.objectContaining({ id: mine.id, answerable: true })]);
    expect(await answerItem(daemon, mine.id, { action: 'approve' }, as('carol'))).toMatchObject({ status: 204 });
    expect(await call).toContain('deploy v2');

    const approval = await eventually(() => auditRows(dataDir, "principal = 'alice' AND method = 'switchboard/approval'")[0]);
    expect(approval).toMatchObject({ decision: 'allowed', rule: 'approval:inbox' });
    expect(JSON.parse(String(approval.arguments))).toMatchObject({ via: 'inbox', answeredBy: 'carol', approvers: ['lead'], confirmedBy: 'lead-approves-echo' });
  });

  it("a lead's own call waits for another lead (a key's role counts as the policy's users: does), and an admin may answer too", async () => {
    const carol = await host('carol');
    const first = carol.client.callTool({ name: 'fix__echo', arguments: { text: 'carol ships' } }).then(textOf);
    const item = await pendingItem(daemon, (i) => JSON.stringify(i.arguments).includes('carol ships'), as('carol'));
    expect(item.answerable).toBe(false);
    expect((await answerItem(daemon, item.id, { action: 'approve' }, as('carol'))).status).toBe(403);
    expect(await answerItem(daemon, item.id, { action: 'approve' }, as('erin'))).toMatchObject({ status: 204 });
    expect(await first).toContain('carol ships');

    const second = carol.client.callTool({ name: 'fix__echo', arguments: { text: 'carol again' } }).then(() => undefined, failure);
    const next = await pendingItem(daemon, (i) => JSON.stringify(i.arguments).includes('carol again'), as('root'));
    expect(next.answerable).toBe(true);
    expect(await answerItem(daemon, next.id, { action: 'decline' }, as('root'))).toMatchObject({ status: 204 });
    expect(await second).toEqual({ code: -32014, message: 'The call to fix__echo was declined by root' });
    expect(carol.asked).toEqual([]);
  });

  it('policy check says who approves; lint has no warning for them where callers are told apart', () => {
    const checked = runCli(['policy', 'check', '--config', configPath, '--principal', 'alice', '--tool', 'fix__echo']);
    expect(checked.stdout).toMatch(/^confirm {2}rule: lead-approves-echo \(approved in the inbox by someone else with role lead\)\n/);
    expect(runCli(['policy', 'lint', '--config', configPath]).stderr).not.toContain('approvers');
  });

  it('a confirm rule without approvers still asks the caller on its own host', async () => {
    const alice = await host('alice');
    expect(textOf(await alice.client.callTool({ name: 'fix__add', arguments: { a: 1, b: 2 } }))).toContain('3');
    expect(alice.asked).toHaveLength(1);
  });
});

describe('approvers where every caller is the same local user', () => {
  it('refuses at once, saying why, rather than wait for an answer nobody may give', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    const configPath = writeConfig({ policy: { file: join(dir, 'policy.yaml') }, mcpServers: { fix: stdioFixture() } }, dir);
    // Said before the first call is refused: by config check, and in the daemon's log at load.
    expect(runCli(['config', 'check', '--config', configPath]).stderr).toContain(
      "roles.dev.1.approvers: auth.mode is none: every caller is the same local user, so nobody but the caller could approve; the rule's calls are refused",
    );
    const daemon = await startDaemon(configPath);
    const { client } = await relayHost(daemon, 'local', {});
    try {
      await eventually(async () => (await client.listTools()).tools.some((t) => t.name === 'fix__echo'));
      expect(await client.callTool({ name: 'fix__echo', arguments: { text: 'x' } }).then(() => undefined, failure)).toEqual({
        code: -32014,
        message:
          "The call to fix__echo needs approval by someone else with role lead (rule 'lead-approves-echo'), but this daemon tells no callers apart (auth.mode: none): nobody but the caller could answer",
      });
    } finally {
      await client.close();
    }
  });
});
