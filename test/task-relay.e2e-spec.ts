import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  ProgressNotificationSchema,
  TaskStatusNotificationSchema,
  type Progress,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING_SERVER, eventually, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { auditRows } from './support/audit-rows.js';
import { createKey } from './support/cli.js';
import { eventsOf, taskUpstream } from './support/task-fixture.js';

/**
 * Tasks relayed to hosts that speak them (2025-11-25, ADR 012): a host that negotiated
 * 2025-11-25 and declared `tasks` calls a tool as a task, gets the gateway's task id at once,
 * and polls, lists, fetches or cancels it; the id is bound to the API key that made it.
 * Through the real daemon to SDK v1 hosts (SDK v2 2.4.0 has no task client), against the task
 * fixture (test/fixtures/task-upstream.mjs) and server-everything's simulate-research-query.
 */

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const textOf = (result: unknown) => (result as { content: Array<{ text?: string }> }).content[0]?.text ?? '';

interface TaskHost {
  client: Client;
  statuses: Task[];
  asked: string[];
  /** The `_meta` of each question it was asked. */
  askedMeta: (Record<string, unknown> | undefined)[];
  close(): Promise<void>;
}

afterAll(stopAllDaemons);

describe('tasks relayed to a host that speaks them', () => {
  let dir: string;
  let events: string;
  let daemon: DaemonHandle;
  const keys: Record<string, string> = {};
  const hosts: TaskHost[] = [];

  /** An SDK v1 host of 2025-11-25 signed in with `key`; with `tasks`, it declares the capability. */
  async function hostOf(key: string, tasks = true): Promise<TaskHost> {
    const capabilities = { elicitation: { form: {} }, ...(tasks && { tasks: { list: {}, cancel: {} } }) };
    const client = new Client({ name: 'task-host', version: '1.0.0' }, { capabilities });
    const statuses: Task[] = [];
    const asked: string[] = [];
    const askedMeta: (Record<string, unknown> | undefined)[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => void statuses.push(n.params as Task));
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(String(request.params.message));
      askedMeta.push(request.params._meta);
      // The fixture asks for a colour, simulate-research-query for an interpretation.
      const fields = Object.keys(request.params.mode === 'url' ? {} : request.params.requestedSchema.properties);
      const content = fields.includes('colour') ? { colour: 'teal' } : { interpretation: 'snake' };
      // Its answer names the task it was told the question is about, as the spec's flow shows.
      const related = request.params._meta?.[RELATED_TASK];
      return { action: 'accept', content, ...(related !== undefined && { _meta: { [RELATED_TASK]: related } }) };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    const host = { client, statuses, asked, askedMeta, close: () => client.close().catch(() => undefined) };
    hosts.push(host);
    return host;
  }

  /** A task-augmented tools/call: answered at once with the gateway's task. */
  async function startTask(host: TaskHost, name: string, args: Record<string, unknown> = {}): Promise<Task> {
    const created = await host.client.request({ method: 'tools/call', params: { name, arguments: args } }, CreateTaskResultSchema, { task: { ttl: 120_000 }, timeout: 60_000 });
    return created.task;
  }

  /** The upstream task id the fixture logged for the newest task of `tool`. */
  const upstreamIdOf = (tool: string) => eventually(() => eventsOf(events).filter((l) => l.startsWith(`created ${tool} `)).at(-1)?.split(' ')[2]);

  async function errorOf(promise: Promise<unknown>): Promise<McpError> {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpError);
    return err as McpError;
  }

  beforeAll(async () => {
    dir = tempDir('sb-task-relay-');
    events = join(dir, 'events.log');
    const jobs = taskUpstream(events);
    const everything = { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] };
    const own = { ...jobs, isolation: 'per-session' };
    const policy = join(dir, 'policy.yaml');
    writeFileSync(policy, 'defaultEffect: allow\nroles:\n  no-doom:\n    - { id: no-doom, deny: call, tool: "jobs__doomed" }\nusers:\n  bob: [no-doom]\n');
    const configPath = writeConfig({ auth: { mode: 'required' }, policy: { file: policy }, mcpServers: { jobs, everything, own } }, dir);
    for (const name of ['alice', 'bob']) keys[name] = createKey(configPath, name);
    daemon = await startDaemon(configPath);
  });
  afterAll(async () => {
    await Promise.all(hosts.map((h) => h.close()));
    await daemon?.stop();
  });

  it("is told the gateway relays tasks, and which tools it may call as one; a host that declared no tasks keeps ADR 010's plain tools", async () => {
    const alice = await hostOf(keys.alice);
    expect(alice.client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tools = await eventually(async () => {
      const listed = (await alice.client.listTools()).tools;
      return listed.some((t) => t.name === 'jobs__research') && listed.some((t) => t.name === 'everything__echo') ? listed : undefined;
    });
    const byName = new Map(tools.map((t) => [t.name, t]));
    // Task-only upstream, optional here: the gateway runs a plain call of it as a task itself.
    expect(byName.get('jobs__research')?.execution).toEqual({ taskSupport: 'optional' });
    expect(byName.get('everything__simulate-research-query')?.execution).toEqual({ taskSupport: 'optional' });
    expect(byName.get('everything__echo')).not.toHaveProperty('execution');

    const plain = await hostOf(keys.alice, false);
    expect(plain.client.getServerCapabilities()?.tasks).toBeUndefined();
    const plainTools = (await plain.client.listTools()).tools;
    expect(plainTools.filter((t) => 'execution' in t)).toEqual([]);
    expect(textOf(await plain.client.callTool({ name: 'jobs__research', arguments: { text: 'plainly', steps: 1 } }, CallToolResultSchema, { timeout: 60_000 }))).toBe('researched plainly');
    // tasks/* do not exist for it (asked raw: the SDK would not send them without the capability).
    const raw = await fetch(daemon.mcpUrl, {
      method: 'POST',
      headers: { Authorization: `Bearer ${keys.alice}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': String((plain.client.transport as StreamableHTTPClientTransport).sessionId), 'Mcp-Protocol-Version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/list', params: {} }),
    });
    expect(await raw.text()).toContain('"code":-32601');
  });

  it("answers a task-augmented call with the gateway's own task id, tells the host its status under that id, and relays the checked result related to it", async () => {
    const alice = await hostOf(keys.alice);
    const task = await startTask(alice, 'jobs__research', { text: 'tides', steps: 2 });
    const upstreamId = await upstreamIdOf('research');
    expect(task.taskId).not.toBe(upstreamId);
    expect(Buffer.from(task.taskId, 'base64url')).toHaveLength(16);
    const result = await alice.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { timeout: 60_000 });
    expect(textOf(result)).toBe('researched tides');
    expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: task.taskId });
    expect(await alice.client.experimental.tasks.getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'completed' });
    // The upstream's notifications/tasks/status, under the gateway's id only.
    const done = await eventually(() => alice.statuses.find((s) => s.status === 'completed'));
    expect(done.taskId).toBe(task.taskId);
    expect(JSON.stringify(alice.statuses)).not.toContain(upstreamId);
    // The spec has a status notification carry no related-task: its taskId says it.
    expect(alice.statuses.filter((s) => '_meta' in s)).toEqual([]);
    // Audited: the call when the task was made, and how it ended when its result was fetched.
    const data = join(dir, 'data');
    const call = await eventually(() => auditRows(data, "method = 'tools/call' AND name = 'jobs__research' AND outcome = 'task'")[0]);
    expect(call).toMatchObject({ principal: 'alice', decision: 'allowed', upstream: 'jobs', original_name: 'research' });
    const fetched = await eventually(() => auditRows(data, "method = 'tasks/result' AND outcome = 'ok'")[0]);
    expect(fetched).toMatchObject({ principal: 'alice', name: 'jobs__research', decision: 'allowed', upstream: 'jobs', original_name: 'research' });
  });

  it("keeps sending the upstream's progress under the host's own token after the task was created, to that host only, until the task ends", async () => {
    const alice = await hostOf(keys.alice);
    // Another host of the same key, and another key's: neither gets progress that is not theirs.
    const bystanders: Progress[] = [];
    for (const other of [await hostOf(keys.alice), await hostOf(keys.bob)]) {
      other.client.setNotificationHandler(ProgressNotificationSchema, (n) => void bystanders.push(n.params));
    }
    const progress: Progress[] = [];
    const created = await alice.client.request(
      { method: 'tools/call', params: { name: 'jobs__research', arguments: { text: 'currents', steps: 3, late: true } } },
      CreateTaskResultSchema,
      { task: { ttl: 120_000 }, timeout: 60_000, onprogress: (p) => void progress.push(p) },
    );
    // The fixture's first step comes after its answer: all of it is progress of the task, not the call.
    expect(progress).toEqual([]);
    const upstreamId = await upstreamIdOf('research');
    await eventually(() => progress.length >= 3 || undefined);
    expect(textOf(await alice.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema, { timeout: 60_000 }))).toBe('researched currents');
    // The fixture sends one more after the task completed, which the spec forbids: it goes no further.
    await eventually(() => eventsOf(events).includes(`late ${upstreamId}`));
    // What the upstream sends after it reaches the host after it, on the same stream: a second
    // task's progress (also after its answer) arriving means the late one was dropped, not slow.
    const after: Progress[] = [];
    await alice.client.request(
      { method: 'tools/call', params: { name: 'jobs__research', arguments: { text: 'tides', steps: 1 } } },
      CreateTaskResultSchema,
      { task: { ttl: 120_000 }, timeout: 60_000, onprogress: (p) => void after.push(p) },
    );
    await eventually(() => after.length >= 1 || undefined);
    expect(progress.map((p) => [p.progress, p.total, p.message])).toEqual([
      [1, 3, 'step 1'],
      [2, 3, 'step 2'],
      [3, 3, 'step 3'],
    ]);
    // Each related to the task as the host knows it (the spec: every notification about a task names it).
    for (const p of progress) expect((p as { _meta?: Record<string, unknown> })._meta?.[RELATED_TASK]).toEqual({ taskId: created.task.taskId });
    expect(bystanders).toEqual([]);
  });

  it('relates progress the upstream sent in the same write as its CreateTaskResult to the task', async () => {
    const alice = await hostOf(keys.alice);
    const progress: Progress[] = [];
    const created = await alice.client.request(
      { method: 'tools/call', params: { name: 'jobs__burst', arguments: {} } },
      CreateTaskResultSchema,
      { task: { ttl: 120_000 }, timeout: 60_000, onprogress: (p) => void progress.push(p) },
    );
    expect(textOf(await alice.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema, { timeout: 60_000 }))).toBe('burst done');
    await eventually(() => progress.length >= 1 || undefined);
    expect(progress.map((p) => [p.progress, p.message, (p as { _meta?: Record<string, unknown> })._meta?.[RELATED_TASK]])).toEqual([
      [1, 'burst', { taskId: created.task.taskId }],
    ]);
  });

  it("lists only the caller's tasks, and answers another key's task id exactly as an unknown one", async () => {
    const alice = await hostOf(keys.alice);
    const bob = await hostOf(keys.bob);
    const task = await startTask(alice, 'jobs__research', { text: 'reefs', steps: 1 });
    expect((await alice.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(task.taskId);
    expect((await bob.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(task.taskId);
    const unknown = 'AAAAAAAAAAAAAAAAAAAAAA';
    const answers = [
      await errorOf(bob.client.experimental.tasks.getTask(task.taskId)),
      await errorOf(bob.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)),
      await errorOf(bob.client.experimental.tasks.cancelTask(task.taskId)),
      await errorOf(alice.client.experimental.tasks.getTask(unknown)),
      await errorOf(alice.client.experimental.tasks.cancelTask(unknown)),
    ];
    for (const err of answers) expect({ code: err.code, message: err.message }).toEqual({ code: -32602, message: 'MCP error -32602: Invalid params: unknown task' });
    // Bob's guesses are on the record; alice's task is untouched.
    const refused = await eventually(() => auditRows(join(dir, 'data'), "principal = 'bob' AND rule = 'task:unknown'"));
    expect(refused.map((r) => [r.method, r.decision])).toEqual(expect.arrayContaining([['tasks/result', 'denied'], ['tasks/cancel', 'denied']]));
    expect(textOf(await alice.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { timeout: 60_000 }))).toBe('researched reefs');
  });

  it('cancels a task upstream on tasks/cancel, and only then: a cancelled tasks/result leaves it running', async () => {
    const alice = await hostOf(keys.alice);
    const task = await startTask(alice, 'jobs__endless');
    const upstreamId = await upstreamIdOf('endless');
    const lookups = () => eventsOf(events).filter((l) => l === `get ${upstreamId}`).length;
    const before = lookups();
    const waiting = new AbortController();
    const result = alice.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { signal: waiting.signal });
    // The upstream looked the task up for it: the gateway's tasks/result is in flight there.
    await eventually(() => lookups() > before);
    waiting.abort('not waiting any more');
    await expect(result).rejects.toThrow();
    expect((await alice.client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
    expect(eventsOf(events)).not.toContain(`cancelled ${upstreamId}`);

    const cancelled = await alice.client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    await eventually(() => eventsOf(events).includes(`cancelled ${upstreamId}`));
    const again = await errorOf(alice.client.experimental.tasks.cancelTask(task.taskId));
    expect(again.code).toBe(-32602);
    expect(await eventually(() => auditRows(join(dir, 'data'), "method = 'tasks/cancel' AND outcome = 'ok'")[0])).toMatchObject({ name: 'jobs__endless', upstream: 'jobs' });
  });

  it('keeps a task when its host leaves, but not on a per-session server, whose connection (and task) ends with the session', async () => {
    const leaving = await hostOf(keys.alice);
    await eventually(async () => (await leaving.client.listTools()).tools.some((t) => t.name === 'own__endless'));
    const shared = await startTask(leaving, 'jobs__endless');
    const sharedUpstream = await upstreamIdOf('endless');
    const own = await startTask(leaving, 'own__endless');
    const ownUpstream = await upstreamIdOf('endless');
    // It ends its session (a DELETE), as a host that is done does.
    await (leaving.client.transport as StreamableHTTPClientTransport).terminateSession();
    await leaving.close();
    const back = await hostOf(keys.alice);
    const ended = await eventually(async () => {
      const listed = (await back.client.experimental.tasks.listTasks()).tasks;
      const task = listed.find((t) => t.taskId === own.taskId);
      return task?.status === 'failed' ? listed : undefined;
    });
    expect(ended.find((t) => t.taskId === own.taskId)?.statusMessage).toContain("upstream 'own' was stopped");
    await eventually(() => eventsOf(events).includes(`cancelled ${ownUpstream}`));
    expect(ended.find((t) => t.taskId === shared.taskId)?.status).toBe('working');
    expect(eventsOf(events)).not.toContain(`cancelled ${sharedUpstream}`);
    await back.client.experimental.tasks.cancelTask(shared.taskId);
  });

  it("brings the upstream's question during input_required to the host waiting on tasks/result, its row in the trace of the call that made the task", async () => {
    const alice = await hostOf(keys.alice);
    const task = await startTask(alice, 'jobs__ask');
    expect(textOf(await alice.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { timeout: 60_000 }))).toBe('chose teal');
    expect(alice.asked).toEqual(['Which colour?']);
    // The question names the task as the host knows it, the gateway's id; the upstream's never reaches it.
    const upstreamId = await upstreamIdOf('ask');
    expect(alice.askedMeta).toEqual([{ [RELATED_TASK]: { taskId: task.taskId } }]);
    expect(JSON.stringify(alice.askedMeta)).not.toContain(upstreamId);
    // The host's answer, which named the gateway's id, reached the upstream under its own.
    expect(eventsOf(events)).toContain(`answered ${upstreamId} ${JSON.stringify({ taskId: upstreamId })}`);
    // The question was asked on tasks/result, minutes after the call perhaps: its row joins the call's trace.
    const data = join(dir, 'data');
    const call = await eventually(() => auditRows(data, "method = 'tools/call' AND name = 'jobs__ask' AND outcome = 'task'")[0]);
    const asked = await eventually(() => auditRows(data, "method = 'elicitation/create' AND upstream = 'jobs' AND principal = 'alice'")[0]);
    expect(call.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(asked).toMatchObject({ decision: 'allowed', outcome: 'ok', trace_id: call.trace_id });
  });

  it("asks a host that speaks tasks about a task the gateway runs for its plain call without any task id, as any host", async () => {
    const alice = await hostOf(keys.alice);
    // A plain call of a task-only tool: the gateway's task (ADR 010), which this host never sees.
    expect(textOf(await alice.client.callTool({ name: 'jobs__ask', arguments: {} }, CallToolResultSchema, { timeout: 60_000 }))).toBe('chose teal');
    expect(alice.askedMeta).toEqual([undefined]);
    const upstreamId = await upstreamIdOf('ask');
    expect(eventsOf(events)).toContain(`answered ${upstreamId} ${JSON.stringify({ taskId: upstreamId })}`);
  });

  it("relays server-everything's simulate-research-query as a task, its clarifying question included", async () => {
    const alice = await hostOf(keys.alice);
    const task = await startTask(alice, 'everything__simulate-research-query', { topic: 'python', ambiguous: true });
    const result = await alice.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { timeout: 60_000 });
    expect(textOf(result)).toContain('# Research Report: python (snake)');
    expect(alice.asked.at(-1)).toContain('python');
  });

  it('asks the policy of a task-augmented call as of any call: a denied tool is as unknown, and the task never made', async () => {
    const bob = await hostOf(keys.bob);
    const denied = await errorOf(startTask(bob, 'jobs__doomed'));
    expect({ code: denied.code, message: denied.message }).toEqual({ code: -32602, message: 'MCP error -32602: Unknown tool: jobs__doomed' });
    const row = await eventually(() => auditRows(join(dir, 'data'), "principal = 'bob' AND name = 'jobs__doomed'")[0]);
    expect(row).toMatchObject({ method: 'tools/call', decision: 'denied', rule: 'no-doom', outcome: null });
    expect(eventsOf(events).filter((l) => l.startsWith('created doomed '))).toEqual([]);
    // Alice may: hers is a task, which fails upstream and says why.
    const alice = await hostOf(keys.alice);
    const task = await startTask(alice, 'jobs__doomed');
    const failed = await eventually(async () => {
      const state = await alice.client.experimental.tasks.getTask(task.taskId);
      return state.status === 'failed' ? state : undefined;
    });
    expect(failed.statusMessage).toBe('the fixture failed this task on purpose');
  });

  it('refuses a task-augmented call of a tool its upstream cannot run as a task with -32601, and records it', async () => {
    const alice = await hostOf(keys.alice);
    const err = await errorOf(startTask(alice, 'everything__echo', { message: 'hi' }));
    expect(err.code).toBe(-32601);
    expect(err.message).toContain('everything__echo cannot be called as a task');
    const row = await eventually(() => auditRows(join(dir, 'data'), "name = 'everything__echo' AND rule = 'task:not-supported'")[0]);
    expect(row).toMatchObject({ method: 'tools/call', decision: 'denied', outcome: null });
    // A `task` that is no task augmentation is bad params, whatever the tool.
    const malformed = await errorOf(alice.client.request({ method: 'tools/call', params: { name: 'jobs__research', arguments: { text: 'x' }, task: { ttl: 'soon' } } }, CreateTaskResultSchema));
    expect({ code: malformed.code, message: malformed.message }).toEqual({ code: -32602, message: 'MCP error -32602: Invalid params: task must be an object with an optional non-negative integer ttl' });
  });
});
