import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError, TaskStatusNotificationSchema, type Task } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, isAlive, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { createKey } from './support/cli.js';
import { eventsOf, taskUpstream } from './support/task-fixture.js';

/**
 * Tasks relayed to a host (ADR 012, as in task-relay.e2e-spec.ts) whose upstream dies or is
 * removed by a reload while they run: each fails, its owner is told, and tasks/result
 * answers with an error rather than hanging.
 */

afterAll(stopAllDaemons);

describe('tasks whose upstream goes away', () => {
  let dir: string;
  let events: string;
  let configPath: string;
  let daemon: DaemonHandle;
  let host: Client;
  const statuses: Task[] = [];

  const jobs = () => taskUpstream(events);
  const config = (servers: Record<string, unknown>) => ({ auth: { mode: 'required' }, policy: { defaultEffect: 'allow' }, log: { level: 'info' }, mcpServers: servers });

  async function endlessTask(): Promise<{ task: Task; upstreamId: string }> {
    const known = eventsOf(events).filter((l) => l.startsWith('created endless ')).length;
    const created = await host.request({ method: 'tools/call', params: { name: 'jobs__endless', arguments: {} } }, CreateTaskResultSchema, { task: { ttl: 120_000 }, timeout: 60_000 });
    const upstreamId = await eventually(() => eventsOf(events).filter((l) => l.startsWith('created endless '))[known]?.split(' ')[2]);
    return { task: created.task, upstreamId };
  }

  beforeAll(async () => {
    dir = tempDir('sb-task-relay-gone-');
    events = join(dir, 'events.log');
    configPath = writeConfig(config({ jobs: jobs() }), dir);
    const key = createKey(configPath, 'alice');
    daemon = await startDaemon(configPath);
    host = new Client({ name: 'task-host', version: '1.0.0' }, { capabilities: { tasks: { list: {}, cancel: {} } } });
    host.setNotificationHandler(TaskStatusNotificationSchema, (n) => void statuses.push(n.params as Task));
    await host.connect(new StreamableHTTPClientTransport(new URL(daemon.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    await eventually(async () => (await host.listTools()).tools.some((t) => t.name === 'jobs__endless'));
  });
  afterAll(async () => {
    await host?.close().catch(() => undefined);
    await daemon?.stop();
  });

  it('fails the tasks of an upstream that dies mid-task, tells their owner, and answers tasks/result with an error, not a hang', async () => {
    const { task } = await endlessTask();
    const pid = Number(eventsOf(events).filter((l) => l.startsWith('pid ')).at(-1)!.split(' ')[1]);
    process.kill(pid, 'SIGKILL');
    await eventually(() => !isAlive(pid));
    const failed = await eventually(() => statuses.find((s) => s.taskId === task.taskId && s.status === 'failed'));
    expect(failed.statusMessage).toContain("the connection to upstream 'jobs' was lost");
    expect(await host.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'failed' });
    const err = await host.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema).then(
      () => undefined,
      (e: unknown) => e as McpError,
    );
    expect(err?.code).toBe(-32000);
  });

  it('fails the tasks of an upstream a reload removed, after cancelling them there', async () => {
    await eventually(async () => (await host.listTools()).tools.some((t) => t.name === 'jobs__endless'));
    const { task, upstreamId } = await endlessTask();
    const next = `${configPath}.next`;
    writeFileSync(next, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, dataDir: join(dir, 'data'), ...config({}) }, null, 2));
    renameSync(next, configPath);
    const failed = await eventually(() => statuses.find((s) => s.taskId === task.taskId && s.status === 'failed'), 20_000, 'the failed status');
    expect(failed.statusMessage).toContain("upstream 'jobs' was stopped");
    expect(eventsOf(events)).toContain(`cancelled ${upstreamId}`);
    expect((await host.experimental.tasks.listTasks()).tasks.find((t) => t.taskId === task.taskId)).toMatchObject({ status: 'failed' });
  });
});
