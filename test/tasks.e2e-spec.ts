import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtocolError, type StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING_SERVER, REPO_ROOT, eventually, everythingOverHttp, isAlive, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';
import { auditRows } from './support/audit-rows.js';
import { connectHost, relayHost, type Host } from './support/hosts.js';

/**
 * Tools an upstream runs only as tasks (2025-11-25, execution.taskSupport "required") are
 * served to every host as plain tools: the gateway calls them as tasks upstream and answers
 * with the task's result. Through the real daemon to a real SDK host, against a fixture built
 * on the SDK's task support (test/fixtures/task-upstream.mjs) and the public reference server.
 */

type Json = Record<string, unknown>;

const textOf = (result: unknown) => ((result as { content: Array<{ text?: string }> }).content[0]?.text ?? '') as string;

/** The fixture's event lines (created, cancelled, pid). */
const eventsOf = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

function taskUpstream(events: string): Json {
  return { command: process.execPath, args: [join(REPO_ROOT, 'test/fixtures/task-upstream.mjs')], env: { TASK_EVENTS: events } };
}

afterAll(stopAllDaemons);

describe('task-only tools of a fixture upstream', () => {
  let dir: string;
  let events: string;
  let daemon: DaemonHandle;
  let host: Host;

  beforeAll(async () => {
    dir = tempDir('sb-tasks-');
    events = join(dir, 'events.log');
    const own = { ...taskUpstream(events), isolation: 'per-session' };
    daemon = await startDaemon(writeConfig({ mcpServers: { jobs: taskUpstream(events), own } }, dir));
    host = await connectHost('streamable-http', { daemon });
  });
  afterAll(async () => {
    await host?.close();
    await daemon?.stop();
  });

  it('are listed as plain tools: no execution, and the gateway declares no tasks', async () => {
    const tools = await eventually(async () => {
      const listed = (await host.client.listTools()).tools.filter((t) => t.name.startsWith('jobs__'));
      return listed.length === 6 ? listed : undefined;
    });
    expect(tools.map((t) => t.name).sort()).toEqual(['jobs__ask', 'jobs__burst', 'jobs__doomed', 'jobs__endless', 'jobs__flawed', 'jobs__research']);
    expect(tools.filter((t) => 'execution' in t)).toEqual([]);
    expect(host.client.getServerCapabilities()?.tasks).toBeUndefined();
  });

  it("answer with the task's result, the task's progress reaching the host, and are audited as any call", async () => {
    const progress: number[] = [];
    const result = await host.client.callTool(
      { name: 'jobs__research', arguments: { text: 'tides', steps: 3 } },
      { onprogress: (p) => progress.push(p.progress), timeout: 60_000 },
    );
    expect(result).toEqual({ content: [{ type: 'text', text: 'researched tides' }] });
    expect(progress).toEqual([1, 2, 3]);
    const row = await eventually(() => auditRows(join(dir, 'data'), "method = 'tools/call' AND name = 'jobs__research'")[0]);
    expect(row).toMatchObject({ decision: 'allowed', outcome: 'ok', upstream: 'jobs', original_name: 'research', error_code: null });
    expect(row.latency_ms).toEqual(expect.any(Number));
    // Hosts never see the task, so nothing about it is audited on its own.
    expect(auditRows(join(dir, 'data'), "method LIKE 'tasks/%'")).toEqual([]);
  });

  it('serve a host of an older revision (2025-03-26, before tasks) alike', async () => {
    const older = await relayHost(daemon, 'older', {}, {}, '2025-03-26');
    try {
      const tool = await eventually(async () => (await older.client.listTools()).tools.find((t) => t.name === 'jobs__research'));
      expect(tool).not.toHaveProperty('execution');
      const result = await older.client.callTool({ name: 'jobs__research', arguments: { text: 'reefs', steps: 1 } }, { timeout: 60_000 });
      expect(result).toEqual({ content: [{ type: 'text', text: 'researched reefs' }] });
    } finally {
      await older.client.close();
    }
  });

  it('of a per-session server run as tasks too, on the session\'s own connection', async () => {
    const host = await connectHost('streamable-http', { daemon });
    try {
      await eventually(async () => (await host.client.listTools()).tools.some((t) => t.name === 'own__research'));
      const result = await host.client.callTool({ name: 'own__research', arguments: { text: 'kelp', steps: 1 } }, { timeout: 60_000 });
      expect(result).toEqual({ content: [{ type: 'text', text: 'researched kelp' }] });
    } finally {
      await host.close();
    }
  });

  it('a task that fails gives the host an error saying so; one that fails with a result gives that result', async () => {
    const failed = await host.client.callTool({ name: 'jobs__doomed', arguments: {} }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(ProtocolError);
    expect((failed as ProtocolError).message).toContain("Upstream 'jobs' task failed: the fixture failed this task on purpose");

    const flawed = await host.client.callTool({ name: 'jobs__flawed', arguments: {} });
    expect(flawed).toEqual({ content: [{ type: 'text', text: 'the tool found a flaw' }], isError: true });
    const rows = auditRows(join(dir, 'data'), "method = 'tools/call' AND name IN ('jobs__doomed', 'jobs__flawed')");
    expect(rows.map((r) => [r.name, r.outcome])).toEqual([
      ['jobs__doomed', 'error'],
      ['jobs__flawed', 'tool_error'],
    ]);
  });

  it("the host's cancel reaches the upstream as tasks/cancel of the task", async () => {
    const before = eventsOf(events).length;
    const abort = new AbortController();
    const call = host.client.callTool({ name: 'jobs__endless', arguments: {} }, { signal: abort.signal }).then(
      () => 'answered',
      () => 'rejected',
    );
    const created = await eventually(() => eventsOf(events).slice(before).find((l) => l.startsWith('created endless ')));
    const taskId = created.split(' ')[2];
    abort.abort('changed my mind');
    expect(await call).toBe('rejected');
    await eventually(() => eventsOf(events).includes(`cancelled ${taskId}`), 15_000, 'tasks/cancel upstream');
    const row = await eventually(() => auditRows(join(dir, 'data'), "method = 'tools/call' AND name = 'jobs__endless'")[0]);
    expect(row).toMatchObject({ decision: 'allowed', outcome: 'cancelled' });
  });

  it('an elicitation the upstream sends while the task is input_required reaches the host that called, and its answer the task', async () => {
    const asker = await relayHost(daemon, 'asker', { elicitation: { form: {} } }, {
      elicitation: () => ({ action: 'accept', content: { colour: 'teal' } }),
    });
    try {
      await eventually(async () => (await asker.client.listTools()).tools.some((t) => t.name === 'jobs__ask'));
      const result = await asker.client.callTool({ name: 'jobs__ask', arguments: {} }, { timeout: 60_000 });
      expect(textOf(result)).toBe('chose teal');
      expect(asker.asked).toHaveLength(1);
      expect(asker.asked[0]).toMatchObject({ message: 'Which colour?' });
      // The host never saw the upstream's task, so the question does not name it.
      expect(asker.asked[0]._meta).toBeUndefined();
    } finally {
      await asker.client.close();
    }
  });
});

describe("what ends a task's call before the task ends cancels the task upstream", () => {
  let dir: string;
  let events: string;
  let daemon: DaemonHandle;

  beforeAll(async () => {
    dir = tempDir('sb-tasks-end-');
    events = join(dir, 'events.log');
    const timed = { ...taskUpstream(events), timeouts: { requestMs: 1000, maxRequestMs: 2000 } };
    const silent = taskUpstream(events);
    silent.env = { ...(silent.env as Json), TASK_GET_SILENT: '1' };
    silent.timeouts = { requestMs: 1000 };
    daemon = await startDaemon(writeConfig({ timeouts: { shutdownMs: 500 }, mcpServers: { jobs: taskUpstream(events), timed, silent } }, dir));
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  /** Calls `tool` and waits until the upstream has created its task; the call's outcome, and the task's id. */
  async function started(host: Host, tool: string, server = 'jobs') {
    const before = eventsOf(events).length;
    await eventually(async () => (await host.client.listTools()).tools.some((t) => t.name === `${server}__${tool}`));
    const call = host.client.callTool({ name: `${server}__${tool}`, arguments: {} }, { timeout: 60_000 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    const created = await eventually(() => eventsOf(events).slice(before).find((l) => l.startsWith(`created ${tool} `)));
    return { call, taskId: created.split(' ')[2] };
  }

  it('the host leaving (its session ended)', async () => {
    const host = await connectHost('streamable-http', { daemon });
    const { taskId } = await started(host, 'endless');
    await (host.client.transport as StreamableHTTPClientTransport).terminateSession();
    await host.close();
    await eventually(() => eventsOf(events).includes(`cancelled ${taskId}`), 15_000, 'tasks/cancel upstream');
  });

  it.each([
    ["the call's timeout (the server's maxRequestMs)", 'timed', 'the maximum request time was reached'],
    ['an upstream that stops answering tasks/get within requestMs', 'silent', 'no response within 1000 ms'],
  ])('%s: the host gets -32001', async (_what, server, why) => {
    const host = await connectHost('streamable-http', { daemon });
    try {
      const { call, taskId } = await started(host, 'endless', server);
      const failed = await call;
      expect(failed).toBeInstanceOf(ProtocolError);
      expect((failed as ProtocolError).code).toBe(-32001);
      expect((failed as ProtocolError).message).toContain(why);
      await eventually(() => eventsOf(events).includes(`cancelled ${taskId}`), 15_000, 'tasks/cancel upstream');
    } finally {
      await host.close();
    }
  });

  it('the daemon shutting down: the host gets an error', async () => {
    const host = await connectHost('streamable-http', { daemon });
    try {
      const { call, taskId } = await started(host, 'endless');
      const stopped = daemon.stop('SIGTERM');
      expect(await call).toBeInstanceOf(Error);
      expect((await stopped).code).toBe(0);
      expect(eventsOf(events)).toContain(`cancelled ${taskId}`);
    } finally {
      await host.close();
    }
  });
});

describe('an upstream that dies while its task runs', () => {
  it('gives the host an error, not a hang', async () => {
    const dir = tempDir('sb-tasks-dies-');
    const events = join(dir, 'events.log');
    const daemon = await startDaemon(writeConfig({ mcpServers: { jobs: taskUpstream(events) } }, dir));
    const host = await connectHost('streamable-http', { daemon });
    try {
      await eventually(async () => (await host.client.listTools()).tools.some((t) => t.name === 'jobs__endless'));
      const pid = Number((await eventually(() => eventsOf(events).find((l) => l.startsWith('pid ')))).split(' ')[1]);
      const call = host.client.callTool({ name: 'jobs__endless', arguments: {} }, { timeout: 60_000 }).then(
        () => undefined,
        (err: unknown) => err,
      );
      await eventually(() => eventsOf(events).some((l) => l.startsWith('created endless ')));
      process.kill(pid, 'SIGKILL');
      await eventually(() => !isAlive(pid));
      const failed = await call;
      expect(failed).toBeInstanceOf(ProtocolError);
      expect((failed as ProtocolError).code).toBe(-32000);
      expect((failed as ProtocolError).message).toContain("Upstream 'jobs'");
    } finally {
      await host.close();
      await daemon.stop();
    }
  });
});

describe('the public reference server (@modelcontextprotocol/server-everything), over stdio and over Streamable HTTP', () => {
  let daemon: DaemonHandle;
  let remote: ChildProcess | undefined;
  let configPath: string;

  beforeAll(async () => {
    const http = await everythingOverHttp();
    remote = http.proc;
    configPath = writeConfig({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] }, remote: { url: http.url } } });
    daemon = await startDaemon(configPath);
  });
  afterAll(async () => {
    await daemon?.stop();
    remote?.kill();
  });

  it('serves simulate-research-query, which it runs only as a task, and answers with its report (to a stdio host too)', async () => {
    for (const host of [await connectHost('streamable-http', { daemon }), await connectHost('stdio', { configPath })]) {
      try {
        // Each report takes four seconds: the two are asked at once.
        const reports = ['everything', 'remote'].map(async (server) => {
          const name = `${server}__simulate-research-query`;
          const tool = await eventually(async () => (await host.client.listTools()).tools.find((t) => t.name === name));
          expect(tool.execution).toBeUndefined();
          const result = await host.client.callTool({ name, arguments: { topic: 'tides' } }, { timeout: 60_000 });
          expect(textOf(result), name).toContain('# Research Report: tides');
        });
        await Promise.all(reports);
      } finally {
        await host.close();
      }
    }
  });

  it("relays its clarifying elicitation (input_required) to the host that called, and the report uses the host's answer", async () => {
    const asker = await relayHost(daemon, 'asker', { elicitation: { form: {} } }, {
      elicitation: () => ({ action: 'accept', content: { interpretation: 'snake' } }),
    });
    try {
      // Over stdio the question comes while only this host has requests there; over HTTP, on tasks/result's stream.
      for (const server of ['everything', 'remote']) {
        const name = `${server}__simulate-research-query`;
        await eventually(async () => (await asker.client.listTools()).tools.some((t) => t.name === name));
        const result = await asker.client.callTool({ name, arguments: { topic: 'python', ambiguous: true } }, { timeout: 60_000 });
        expect(String(asker.asked.at(-1)?.message), name).toContain('python');
        expect(textOf(result), name).toContain('# Research Report: python (snake)');
      }
      expect(asker.asked).toHaveLength(2);
    } finally {
      await asker.client.close();
    }
  });
});
