import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fixturePath, HELLO_URI } from '@switchboard/testing';
import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  isAlive,
  logEntries,
  REPO_ROOT,
  startDaemon,
  stdioFixture,
  stopAllDaemons,
  tempDir,
  writeConfig,
  type DaemonHandle,
} from './support/daemon.js';
import { connectHost, type Host } from './support/hosts.js';

/**
 * The configuration file reloaded live: the daemon is started from a file that the test
 * then rewrites, the way editors save (a temp file renamed over it) and the plain way (an
 * in-place write). A host stays connected over Streamable HTTP throughout and must see
 * every change through list_changed and the lists, without reconnecting.
 *
 * The steps build on each other (one daemon, one host), in file order.
 */

type Json = Record<string, unknown>;

let dir: string;
let file: string;
let daemon: DaemonHandle;
let host: Host;

const A = () => stdioFixture({ FIXTURE_NAME: 'fixture-a', FIXTURE_EXTRA_TOOLS: '1' });
const B = (mark: string) => stdioFixture({ FIXTURE_NAME: 'fixture-b', FIXTURE_MARK: mark });

/** The whole file, as writeConfig writes it (same listen, data dir and log level). */
function fileText(config: Json): string {
  const full = { listen: { host: '127.0.0.1', port: 0 }, dataDir: join(dirname(file), 'data'), log: { level: 'info' }, ...config };
  return JSON.stringify(full, null, 2);
}

/** As editors save: write a temp file next to it, then rename it over the original. */
function saveByRename(text: string): void {
  const tmp = join(dirname(file), `.switchboard.json.${process.pid}.tmp`);
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

function saveInPlace(text: string): void {
  writeFileSync(file, text);
}

async function callText(name: string, args: Json = {}): Promise<string> {
  const result = await host.client.callTool({ name, arguments: args });
  return String((result.content as Json[])[0]?.text);
}

async function stats(tool: string): Promise<{ name: string; pid: number; calls: number }> {
  return JSON.parse(await callText(tool)) as { name: string; pid: number; calls: number };
}

async function toolNames(): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await host.client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } });
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return names;
}

const listChanged = () => host.notifications.get('notifications/tools/list_changed')?.length ?? 0;

/**
 * Resolves once a log line sent now through `a` has reached the host. It rides the GET
 * stream, behind every message the daemon sent there before it (list_changed among them).
 */
async function getStreamCaughtUp(): Promise<void> {
  const marker = `caught-up-${Date.now()}-${Math.random()}`;
  await callText('a__log', { level: 'error', message: marker });
  await eventually(() => (host.notifications.get('notifications/message') ?? []).some((m) => m.data === marker), 10_000, 'the marker on the GET stream');
}

beforeAll(async () => {
  dir = tempDir('sb-reload-');
  // Info level: the test reads the daemon's "config reloaded" entries.
  file = writeConfig({ log: { level: 'info' }, mcpServers: { a: A() } }, dir);
  daemon = await startDaemon(file);
  host = await connectHost('streamable-http', { daemon });
  // Messages that belong to no request (list_changed among them) ride the host's GET
  // stream, which the SDK opens after initialize; wait until it carries one.
  let probe = 0;
  await eventually(async () => {
    const message = `probe-${++probe}`;
    await callText('a__log', { level: 'error', message });
    return (host.notifications.get('notifications/message') ?? []).some((m) => String(m.data).startsWith('probe-'));
  }, 10_000, 'the GET stream');
});
afterAll(async () => {
  await host?.close();
  await stopAllDaemons();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('config reloaded live', () => {
  let aPid: number;
  let bPid: number;

  it('a server added: list_changed, then its tools are listed and callable', async () => {
    aPid = (await stats('a__stats')).pid;
    expect(await toolNames()).not.toContain('b__echo');
    const before = listChanged();
    saveByRename(fileText({ mcpServers: { a: A(), b: B('v1') } }));
    await eventually(() => listChanged() > before, 15_000, 'tools/list_changed after adding b');
    const names = await toolNames();
    expect(names).toEqual(expect.arrayContaining(['a__echo', 'a__extra_000', 'b__echo', 'b__stats']));
    const b = await stats('b__stats');
    expect(b.name).toBe('fixture-b');
    bPid = b.pid;
    expect(await callText('b__env', { name: 'FIXTURE_MARK' })).toBe('v1');
    // The server that did not change kept its process.
    expect((await stats('a__stats')).pid).toBe(aPid);
  });

  it('a changed server (its env, written in place) is restarted: new value, the old process gone', async () => {
    saveInPlace(fileText({ mcpServers: { a: A(), b: B('v2') } }));
    await eventually(async () => (await callText('b__env', { name: 'FIXTURE_MARK' })) === 'v2', 15_000, 'b restarted with v2');
    await eventually(() => !isAlive(bPid), 10_000, `old b process ${bPid} to exit`);
    const b = await stats('b__stats');
    expect(b.pid).not.toBe(bPid);
    bPid = b.pid;
    expect((await stats('a__stats')).pid).toBe(aPid);
  });

  it('a namespace change (prefix -> auto) renames tools and sends list_changed, without restarting anyone', async () => {
    const before = listChanged();
    saveByRename(fileText({ namespace: 'auto', mcpServers: { a: A(), b: B('v2') } }));
    await eventually(() => listChanged() > before, 15_000, 'tools/list_changed after the namespace change');
    const names = await toolNames();
    // Only a has extra_000: bare now. echo is on both: still prefixed.
    expect(names).toContain('extra_000');
    expect(names).not.toContain('a__extra_000');
    expect(names).toEqual(expect.arrayContaining(['a__echo', 'b__echo']));
    expect(names).not.toContain('echo');
    expect(await callText('extra_000')).toBe('extra_000');
    expect((await stats('a__stats')).pid).toBe(aPid);
    expect((await stats('b__stats')).pid).toBe(bPid);
    // One config change, one notification (not one per server whose names moved).
    expect(listChanged()).toBe(before + 1);
  });

  it('an invalid file is refused with every problem logged; the old config stays in force', async () => {
    const names = await toolNames();
    const notified = listChanged();

    // Valid JSON that breaks three rules, written in place.
    saveInPlace(
      fileText({
        namespace: 'sideways',
        pageSize: 0,
        mcpServers: { a: A(), b: B('v3'), bad: { comand: 'node', args: ['no-command'] } },
      }),
    );
    const refused = await eventually(() => logEntries(daemon, 'config change refused; the previous config stays in force')[0], 10_000, 'refusal logged');
    const paths = (refused.problems as { path: string; reason: string; file: string }[]).map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['namespace', 'pageSize', 'mcpServers.bad']));
    // The misspelt key that most likely caused the missing command is named with it, as config check names it.
    expect(refused.warnings).toEqual([{ file, path: 'mcpServers.bad.comand', reason: 'unknown key, ignored (did you mean `command`?)' }]);
    for (const p of refused.problems as { file: string; reason: string }[]) {
      expect(p.file).toBe(file);
      expect(p.reason).not.toBe('');
    }

    // Not JSON at all (saved by rename): refused as well.
    saveByRename('{ "mcpServers": { "a": ');
    await eventually(() => logEntries(daemon, 'config change refused; the previous config stays in force').length >= 2, 10_000, 'second refusal');

    expect(daemon.proc.exitCode).toBeNull();
    expect(await toolNames()).toEqual(names);
    expect(await callText('a__echo', { text: 'still served' })).toBe('still served');
    expect(await callText('extra_000')).toBe('extra_000');
    // Nothing was applied: b was not restarted with v3, and nobody was told of a change.
    expect(await callText('b__env', { name: 'FIXTURE_MARK' })).toBe('v2');
    expect((await stats('b__stats')).pid).toBe(bPid);
    expect(listChanged()).toBe(notified);
  });

  it('a server removed (after the invalid saves): list_changed, its tools gone, its process stopped', async () => {
    const before = listChanged();
    saveByRename(fileText({ namespace: 'auto', mcpServers: { a: A() } }));
    await eventually(() => listChanged() > before, 15_000, 'tools/list_changed after removing b');
    const names = await toolNames();
    expect(names.filter((n) => n.startsWith('b__'))).toEqual([]);
    // Under auto, a's names no longer collide with anyone's: all bare now.
    expect(names).toEqual(expect.arrayContaining(['echo', 'stats', 'extra_000']));
    expect(names.filter((n) => n.startsWith('a__'))).toEqual([]);
    expect(await callText('echo', { text: 'only a' })).toBe('only a');
    expect((await stats('stats')).pid).toBe(aPid);
    await eventually(() => !isAlive(bPid), 10_000, `b process ${bPid} to exit`);
    const gone = await host.client.callTool({ name: 'b__echo', arguments: { text: 'x' } }).then(
      () => undefined,
      (err: { code?: number }) => err.code,
    );
    expect(gone).toBe(-32602);
  });

  it('a new listen address is applied at the next restart, and said so; serving goes on', async () => {
    saveByRename(fileText({ listen: { host: '127.0.0.1', port: 1 }, namespace: 'auto', mcpServers: { a: A() } }));
    await eventually(() => logEntries(daemon, 'a new listen address takes effect after a restart').length === 1, 15_000, 'the warning');
    expect(await callText('echo', { text: 'still here' })).toBe('still here');
  });

  it('a new dataDir or log level is applied at the next restart, and said so in warn lines', async () => {
    const text = JSON.parse(fileText({ listen: { host: '127.0.0.1', port: 1 }, namespace: 'auto', mcpServers: { a: A() } })) as Json;
    saveByRename(JSON.stringify({ ...text, dataDir: join(dirname(file), 'elsewhere'), log: { level: 'debug' } }, null, 2));
    const [dataDirLine] = await eventually(() => {
      const lines = logEntries(daemon, 'a new dataDir takes effect after a restart; until then the daemon keeps using the old one');
      return lines.length === 1 ? lines : undefined;
    }, 15_000, 'the dataDir warning');
    expect(dataDirLine).toMatchObject({ level: 40, dataDir: join(dirname(file), 'elsewhere'), inUse: join(dirname(file), 'data') });
    // pino's own level field stays the line's level (warn, 40), not the new setting.
    const [levelLine] = await eventually(() => {
      const lines = logEntries(daemon, 'a new log level takes effect after a restart');
      return lines.length > 0 ? lines : undefined;
    }, 15_000, 'the log level warning');
    expect(levelLine).toMatchObject({ level: 40, newLevel: 'debug' });
    expect(await callText('echo', { text: 'still here' })).toBe('still here');
  });
});

describe('saves in quick succession', () => {
  /**
   * A stdio server that takes ~4 s to stop: a shell that runs the fixture (which exits when
   * its stdin closes) and then lingers, ignoring SIGTERM, until the SIGKILL that follows the
   * grace periods. Its command line names a file in this test's own temp dir, so the
   * process table says exactly which of its processes exist.
   */
  const marker = () => join(dir, 'slow-server');
  const slow = (mark: string) => ({
    command: 'sh',
    args: ['-c', `: "${marker()}"; trap '' TERM; "${process.execPath}" "${fixturePath('stdio')}"; sleep 30`],
    env: { FIXTURE_NAME: 'slow', FIXTURE_MARK: mark },
  });
  /** Live (not zombie) processes of the slow server, from the process table. */
  const slowProcesses = () =>
    execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(marker()) && !/^\s*\d+\s+Z/.test(line));

  it('a later save applied while an earlier one still stops a server wins: no process left behind', async () => {
    saveByRename(fileText({ namespace: 'auto', mcpServers: { a: A(), slow: slow('0') } }));
    await eventually(async () => (await toolNames()).includes('slow__echo'), 15_000, 'slow listed');
    expect(slowProcesses()).toHaveLength(1);

    // Save 1 restarts slow; its old process takes seconds to stop. Save 2, meanwhile, drops slow.
    const reloads = logEntries(daemon, 'config reloaded').length;
    saveByRename(fileText({ namespace: 'auto', mcpServers: { a: A(), slow: slow('1') } }));
    await eventually(async () => !(await toolNames()).includes('slow__echo'), 10_000, 'slow stopping');
    saveByRename(fileText({ namespace: 'auto', mcpServers: { a: A() } }));

    // Both saves are applied (the second one need not wait for the first one's slow stop).
    const applied = (await eventually(() => {
      const entries = logEntries(daemon, 'config reloaded').slice(reloads);
      return entries.length >= 2 && entries;
    }, 20_000, 'both reloads applied')) as Json[];
    expect(applied.map((e) => ({ added: e.added, removed: e.removed, changed: e.changed }))).toEqual(
      expect.arrayContaining([
        { added: [], removed: [], changed: ['slow'] },
        { added: [], removed: ['slow'], changed: [] },
      ]),
    );
    // An upstream is spawned before the reload that starts it is logged, so a process the
    // first save started too late would be in the table now. None may be, or stay.
    await eventually(() => slowProcesses().length === 0, 5_000, 'no slow process left');
    expect((await toolNames()).filter((n) => n.startsWith('slow__'))).toEqual([]);
    expect(await callText('echo', { text: 'a is fine' })).toBe('a is fine');
  });
});

describe('changes read at use time: applied to the running server, no restart', () => {
  const listChangedOf = (list: 'tools' | 'prompts' | 'resources') =>
    host.notifications.get(`notifications/${list}/list_changed`)?.length ?? 0;
  const fx = (extra: Json = {}) => ({ ...B('fx'), ...extra });

  it('an alias (and pin) change during a slow call: the call completes, same pid, renamed tools, one list_changed per list', async () => {
    saveByRename(fileText({ mcpServers: { a: A(), fx: fx() } }));
    await eventually(async () => (await toolNames()).includes('fx__slow'), 15_000, 'fx listed');
    const { pid, calls } = await stats('fx__stats');
    const reloads = logEntries(daemon, 'config reloaded').length;
    const before = { tools: listChangedOf('tools'), prompts: listChangedOf('prompts'), resources: listChangedOf('resources') };

    const call = host.client.callTool({ name: 'fx__slow', arguments: { ms: 3000 } });
    // The upstream has the call before the save: fx counts it beyond the stats calls asking.
    let polls = 0;
    await eventually(async () => (await stats('fx__stats')).calls - calls - ++polls >= 1, 15_000, 'the slow call to reach fx');
    saveByRename(fileText({ mcpServers: { a: A(), fx: fx({ alias: 'ff', pin: 'warn' }) } }));

    await eventually(() => listChangedOf('tools') > before.tools, 15_000, 'tools/list_changed after the alias change');
    const names = await toolNames();
    expect(names).toEqual(expect.arrayContaining(['ff__slow', 'ff__stats', 'a__echo']));
    expect(names.filter((n) => n.startsWith('fx__'))).toEqual([]);

    const result = await call;
    expect(result.isError).toBeFalsy();
    expect((result.content as Json[])[0]?.text).toBe('slept 3000ms in 1 steps');
    expect((await stats('ff__stats')).pid).toBe(pid);
    expect(isAlive(pid)).toBe(true);

    const applied = (await eventually(() => logEntries(daemon, 'config reloaded')[reloads], 10_000, 'the reload logged')) as Json;
    expect(applied).toMatchObject({ added: [], removed: [], changed: [], updated: ['fx'] });
    // One rename, one notification per list whose names moved; none from a restart. The
    // rename's notifications were sent before the reload was logged; a marker sent now on the
    // same GET stream arrives after them, so each list's count is final once it is heard.
    await getStreamCaughtUp();
    expect(listChangedOf('tools')).toBe(before.tools + 1);
    expect(listChangedOf('prompts')).toBe(before.prompts + 1);
    expect(listChangedOf('resources')).toBe(before.resources + 1);
  });

  it('a new global timeouts.requestMs restarts no one, and the next call runs under it', async () => {
    const pids = { a: (await stats('a__stats')).pid, ff: (await stats('ff__stats')).pid };
    const reloads = logEntries(daemon, 'config reloaded').length;
    saveByRename(fileText({ timeouts: { requestMs: 1000 }, mcpServers: { a: A(), fx: fx({ alias: 'ff', pin: 'warn' }) } }));
    const applied = (await eventually(() => logEntries(daemon, 'config reloaded')[reloads], 10_000, 'the reload logged')) as Json;
    expect(applied).toMatchObject({ added: [], removed: [], changed: [], updated: expect.arrayContaining(['a', 'fx']) });

    const timedOut = await host.client.callTool({ name: 'ff__slow', arguments: { ms: 4000 } }).then(
      () => undefined,
      (err: { code?: number }) => err.code,
    );
    expect(timedOut).toBe(-32001);
    expect((await stats('a__stats')).pid).toBe(pids.a);
    expect((await stats('ff__stats')).pid).toBe(pids.ff);
  });

  it('a change of rateLimits alone restarts no one, holds from the next request, and the reload log names it', async () => {
    const servers = { a: A(), fx: fx({ alias: 'ff', pin: 'warn' }) };
    const reloadWith = async (extra: Json) => {
      const reloads = logEntries(daemon, 'config reloaded').length;
      saveByRename(fileText({ timeouts: { requestMs: 1000 }, ...extra, mcpServers: servers }));
      return (await eventually(() => logEntries(daemon, 'config reloaded')[reloads], 10_000, 'the reload logged')) as Json;
    };
    const pid = (await stats('a__stats')).pid;
    // No server changed: without `settings` the line said nothing, though the limit holds at once.
    const limited = await reloadWith({ rateLimits: { perPrincipalTool: { points: 1, durationSec: 3600 } } });
    expect(limited).toMatchObject({ added: [], removed: [], changed: [], updated: [], settings: ['rateLimits'] });
    expect(await callText('a__echo', { text: 'one' })).toBe('one');
    const refused = await host.client.callTool({ name: 'a__echo', arguments: { text: 'two' } }).then(
      () => undefined,
      (err: { code?: number }) => err.code,
    );
    expect(refused).toBe(-31429);
    // Taken out again: said again, and the next call runs.
    expect(await reloadWith({})).toMatchObject({ updated: [], settings: ['rateLimits'] });
    expect(await callText('a__echo', { text: 'three' })).toBe('three');
    expect((await stats('a__stats')).pid).toBe(pid);
  });

  it('a file nested thousands deep is refused with the path; the daemon lives on, the old config in force', async () => {
    const refusals = logEntries(daemon, 'config change refused; the previous config stays in force').length;
    const deep = `${'{"a":'.repeat(100_000)}"x"${'}'.repeat(100_000)}`;
    saveInPlace(`{"mcpServers":{"a":{"command":"node","env":${deep}}}}`);
    const refused = await eventually(
      () => logEntries(daemon, 'config change refused; the previous config stays in force')[refusals],
      10_000,
      'the refusal logged',
    );
    expect(refused.problems).toEqual([
      { file, path: `mcpServers.a.env${'.a'.repeat(61)}`, reason: 'nested deeper than 64 levels' },
    ]);
    expect(daemon.proc.exitCode).toBeNull();
    expect(await callText('a__echo', { text: 'still served' })).toBe('still served');
  });
});

describe('a server added ahead of another that lists the same names and URIs', () => {
  const hello = 'fixture://static/hello';
  const fixture = (name: string) => stdioFixture({ FIXTURE_NAME: name });
  let ownDir: string;
  let ownFile: string;
  let own: Host;

  const config = (mcpServers: Json) => ({ namespace: 'none', log: { level: 'info' }, mcpServers });
  const uris = async () => (await own.client.listResources()).resources.map((r) => r.uri);
  const text = async (name: string, args: Json = {}) =>
    String(((await own.client.callTool({ name, arguments: args })).content as Json[])[0]?.text);

  beforeAll(async () => {
    ownDir = tempDir('sb-reload-claims-');
    ownFile = writeConfig(config({ b: fixture('fixture-b') }), ownDir);
    own = await connectHost('streamable-http', { daemon: await startDaemon(ownFile) });
  });
  afterAll(async () => {
    await own?.close();
    if (ownDir) rmSync(ownDir, { recursive: true, force: true });
  });

  it('a subscribed URI and a bare tool name keep meaning the held server; the newcomer gets the rewritten forms', async () => {
    await own.client.subscribeResource({ uri: hello });
    expect(JSON.parse(await text('stats')).name).toBe('fixture-b');

    // a0 first in config order: at a fresh start it would keep both the URI and the names.
    const full = JSON.parse(readFileSync(ownFile, 'utf8')) as Json;
    writeFileSync(ownFile, JSON.stringify({ ...full, mcpServers: { a0: fixture('fixture-a0'), b: fixture('fixture-b') } }, null, 2));
    await eventually(async () => (await uris()).includes(`switchboard://a0/${hello}`), 15_000, "a0's rewritten resource listed");

    expect(await uris()).toEqual(expect.arrayContaining([hello, `switchboard://a0/${hello}`]));
    expect((await own.client.readResource({ uri: hello })).contents).toEqual([expect.objectContaining({ uri: hello, text: 'Hello from fixture-b' })]);
    expect(JSON.parse(await text('stats')).name).toBe('fixture-b');
    expect(JSON.parse(await text('a0__stats')).name).toBe('fixture-a0');

    // The update of the URI the host subscribed to comes from the server a read reaches.
    expect(await text('touch_resource', { uri: hello })).toBe(`updated ${hello}`);
    const updates = await eventually(() => own.notifications.get('notifications/resources/updated'), 10_000, 'resources/updated');
    expect(updates).toEqual([{ uri: hello }]);
    expect(await text('a0__touch_resource', { uri: hello })).toBe(`not subscribed: ${hello}`);
  });

  it('the holder down and back (a0 first in config order all along): its URI and names are still its own', async () => {
    const before = JSON.parse(await text('stats')) as { name: string; pid: number };
    await own.client.callTool({ name: 'crash', arguments: {} }).catch(() => undefined);
    const after = await eventually(async () => {
      const s = (await text('stats').then(JSON.parse, () => undefined)) as { pid: number } | undefined;
      return s && s.pid !== before.pid ? s : undefined;
    }, 20_000, 'b restarted');
    expect(isAlive(before.pid)).toBe(false);
    expect(JSON.parse(await text('stats')).pid).toBe(after.pid);
    expect(await uris()).toEqual(expect.arrayContaining([hello, `switchboard://a0/${hello}`]));
    expect((await own.client.readResource({ uri: hello })).contents).toEqual([expect.objectContaining({ text: 'Hello from fixture-b' })]);
    expect(JSON.parse(await text('a0__stats')).name).toBe('fixture-a0');
  });
});

describe("a session's capabilities, fixed at initialize, through a reload that adds a server with more", () => {
  it('hears list_changed only for the lists it was given, and cannot subscribe', async () => {
    const own = tempDir('sb-reload-caps-');
    const toolsOnly = { command: process.execPath, args: [join(REPO_ROOT, 'test/fixtures/upstream-older-revision.mjs')], env: { LEGACY_TOOLS_ONLY: '1' } };
    const config = (servers: Json) => ({ listen: { host: '127.0.0.1', port: 0 }, dataDir: join(own, 'data'), log: { level: 'warn' }, mcpServers: servers });
    const path = writeConfig(config({ legacy: toolsOnly }), own);
    const d = await startDaemon(path);
    const h = await connectHost('streamable-http', { daemon: d });
    try {
      expect(h.client.getServerCapabilities()).toEqual({ tools: { listChanged: true }, logging: {} });
      const count = (list: string) => h.notifications.get(`notifications/${list}/list_changed`)?.length ?? 0;

      writeFileSync(path, JSON.stringify(config({ legacy: toolsOnly, fx: stdioFixture() })));
      await eventually(async () => count('tools') >= 1 && (await h.client.listTools()).tools.some((t) => t.name === 'fx__echo'), 15_000, 'fx added');
      const refused = await h.client.subscribeResource({ uri: HELLO_URI }).then(() => undefined, (err: unknown) => err);
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(-32601);

      // A second change: its tools/list_changed comes after anything the first one sent on
      // the same stream, so once it is here, a prompts or resources one would be too.
      writeFileSync(path, JSON.stringify(config({ legacy: toolsOnly })));
      await eventually(() => count('tools') >= 2, 15_000, 'tools/list_changed after removing fx');
      expect(count('prompts')).toBe(0);
      expect(count('resources')).toBe(0);
      expect(h.client.getServerCapabilities()).toEqual({ tools: { listChanged: true }, logging: {} });
    } finally {
      await h.close();
      await d.stop();
      rmSync(own, { recursive: true, force: true });
    }
  });
});
