import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fixturePath, startHttpFixture, type FixtureStatsReport, type HttpFixture } from '@switchboard/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { auditRows, journaledRows } from './support/audit-rows.js';
import { runCli } from './support/cli.js';
import { eventually, stdioFixture, tempDir } from './support/daemon.js';
import { initialize, launch, spawnHost, stopAllHosts, type RawHost } from './support/stdio-host.js';

/**
 * How `switchboard stdio` ends: its host closing stdin or its end of stdout while a call runs,
 * or a signal (at start-up, mid-session, twice). Each way, the calls it leaves are cancelled
 * upstream and audited, and it exits cleanly. (The protocol on the wire: stdio-downstream.e2e-spec.ts.)
 */

const fixtures: HttpFixture[] = [];

afterEach(async () => {
  await stopAllHosts();
  await Promise.all(fixtures.splice(0).map((f) => f.stop()));
});

describe('switchboard stdio: the host closes stdin while a call runs', () => {
  for (const kind of ['http', 'sse'] as const) {
    it(`cancels the call upstream before it exits, its audit row written (${kind === 'sse' ? 'legacy HTTP+SSE' : 'Streamable HTTP'} upstream)`, async () => {
      const fixture = await startHttpFixture(kind);
      fixtures.push(fixture);
      const host = await launch('2025-06-18', { type: kind, url: fixture.url });
      await startLongCall(host);

      host.proc.stdin.end();
      expect(await host.exited).toBe(0);
      await expectCancelledUpstream(fixture, kind);
      // Flushed before the exit: the call the host left behind is in the log, as ended with the session.
      expect(auditRows(host.dataDir, `name = 'fx__slow'`)).toMatchObject([
        { transport: 'stdio', decision: 'allowed', outcome: 'cancelled', error_message: 'No answer: the session ended before the request completed' },
      ]);
    });
  }
});

describe('switchboard stdio: the host closes its end of stdout while a call runs', () => {
  it('is taken for the host going away, as a closed stdin is: the call is cancelled upstream and the gateway exits 0, no crash', async () => {
    const fixture = await startHttpFixture('http');
    fixtures.push(fixture);
    const host = await launch('2025-06-18', { type: 'http', url: fixture.url });
    await startLongCall(host);

    host.proc.stdout.destroy();
    // The gateway learns it on its next write: the answer to this.
    host.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    expect(await host.exited).toBe(0);
    expect(host.stderr()).not.toMatch(/Unhandled 'error' event|EPIPE\n\s+at /);
    await expectCancelledUpstream(fixture, 'http');
  });
});

describe('switchboard stdio: stopped by a signal', () => {
  // A host that ends the server it launched, or a user's Ctrl-C, may come at any moment. The
  // handlers used to go in only once the database was open and the upstreams started, and each
  // for one signal: a signal before that, or a second one, met its default action (killed by
  // the signal: no audit commit, no stopped upstreams).
  const logged = { log: { level: 'info' } };
  /** How it ended, once its stdout and stderr are read to the end (its last log lines too). */
  const ended = (host: RawHost) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => host.proc.once('close', (code, signal) => resolve({ code, signal })));

  /**
   * `signal`, and `signal` again once the gateway is stopping its lingering upstream (the
   * fixture gone, the shell lingering: `processes` down to one) and `meanwhile` holds;
   * resolves with how it ended.
   */
  const signalTwice = async (host: RawHost, processes: () => string[], signal: NodeJS.Signals, meanwhile?: () => Promise<unknown>) => {
    const end = ended(host);
    host.proc.kill(signal);
    await meanwhile?.();
    await eventually(() => processes().length === 1, 10_000, 'the upstream being stopped');
    host.proc.kill(signal);
    return end;
  };

  it('SIGTERM at its first log line, while it starts: it stops once started, exit 0, logged stopped', async () => {
    // The first line ('database migrated') comes before the upstreams are started. The signal
    // arrives during start-up, but its listener may run only once start-up is done, so whether
    // it is held ('signal during start-up') or acted on at once varies: either way a clean
    // stop. It is a race, so several rounds (without the fix the first round was always killed).
    for (let round = 0; round < 3; round++) {
      const host = spawnHost(stdioFixture(), logged);
      const end = ended(host);
      host.proc.stderr.once('data', () => host.proc.kill('SIGTERM'));
      expect({ round, ...(await end) }, host.stderr()).toEqual({ round, code: 0, signal: null });
      expect(host.stderr()).toMatch(/"signal":"SIGTERM".*"msg":"shutting down/);
      expect(host.stderr()).toContain('"msg":"stopped"');
    }
  });

  // SIGHUP too: the terminal or host that ran it has gone (the daemon reloads on it instead).
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`${signal} the moment it answers initialize: exit 0, logged stopped`, async () => {
      const host = spawnHost(stdioFixture(), logged);
      const end = ended(host);
      host.proc.stdout.once('data', () => host.proc.kill(signal));
      host.send(initialize(0, '2025-06-18'));
      expect(await end, host.stderr()).toEqual({ code: 0, signal: null });
      expect(host.lines).toMatchObject([{ id: 0, result: { protocolVersion: '2025-06-18' } }]);
      expect(host.stderr()).toMatch(new RegExp(`"signal":"${signal}".*"msg":"shutting down`));
      expect(host.stderr()).toContain('"msg":"stopped"');
    });
  }

  it('SIGTERM after an audited call was answered, another still running: both rows are committed before it exits', async () => {
    // Relaxed, with the longest flushMs: nothing but the shutdown commits the rows.
    const host = await launch('2025-06-18', stdioFixture(), { ...logged, audit: { mode: 'relaxed', flushMs: 60_000 } });
    host.send({ jsonrpc: '2.0', id: 'echo', method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'before the signal' } } });
    await host.next((l) => !Array.isArray(l) && l.id === 'echo');
    await startLongCall(host);
    const end = ended(host);
    host.proc.kill('SIGTERM');
    expect(await end, host.stderr()).toEqual({ code: 0, signal: null });
    expect(auditRows(host.dataDir, `name = 'fx__echo'`)).toMatchObject([{ transport: 'stdio', decision: 'allowed', outcome: 'ok' }]);
    // The session ends with the signal: the call it left is cancelled, as when the host closes stdin.
    expect(auditRows(host.dataDir, `name = 'fx__slow'`)).toMatchObject([
      { transport: 'stdio', decision: 'allowed', outcome: 'cancelled', error_message: 'No answer: the session ended before the request completed' },
    ]);
  });

  it('a second signal while it stops (a second Ctrl-C) exits at once, code 1, logged; the upstream it was stopping does not outlive it', async () => {
    const { fx, processes } = lingeringUpstream();
    const host = await launch('2025-06-18', fx, logged);
    expect(processes()).toHaveLength(2);
    expect(await signalTwice(host, processes, 'SIGINT'), host.stderr()).toEqual({ code: 1, signal: null });
    expect(host.stderr()).toMatch(/"signal":"SIGINT".*"msg":"second signal while shutting down: exiting now/);
    // The gateway's child reaper ends what it no longer waited for.
    await eventually(() => processes().length === 0, 15_000, 'the lingering upstream gone');
  });

  it('a second signal while it stops, strict audit: the call the host saw answered is in the log after the next start, and the chain verifies', async () => {
    // Strict (the default), and a move interval far longer than the test: the answered call's
    // row is in the journal only, and the shutdown's final commit, which would move it into
    // the database, never comes (the second signal ends the process while the upstream stops).
    const { fx, processes } = lingeringUpstream();
    const host = await launch('2025-06-18', fx, { ...logged, audit: { flushMs: 60_000 } });
    const text = 'answered before the signals';
    host.send({ jsonrpc: '2.0', id: 'echo', method: 'tools/call', params: { name: 'fx__echo', arguments: { text } } });
    expect(await host.next((l) => !Array.isArray(l) && l.id === 'echo')).toMatchObject({ result: { content: [{ text }] } });
    await startLongCall(host);
    expect(await signalTwice(host, processes, 'SIGTERM'), host.stderr()).toEqual({ code: 1, signal: null });
    expect(host.stderr()).toMatch(/"signal":"SIGTERM".*"msg":"second signal while shutting down: exiting now, [^"]*; \d+ audit rows? not yet committed: those in the journal are moved in at the next start"/);
    await eventually(() => processes().length === 0, 15_000, 'the lingering upstream gone');

    // Left behind in its journal, and a reader of the database is told so.
    expect(journaledRows(host.dataDir)).toBeGreaterThan(0);
    const stranded = runCli(['audit', 'verify', '--data-dir', host.dataDir]);
    expect(stranded.stderr).toMatch(/warning: \d+ audit rows? (is|are) in the journal of a process that stopped/);

    // The next start on that data dir moves them in; this one stops cleanly at once.
    const again = spawnHost(stdioFixture(), { ...logged, dataDir: host.dataDir });
    again.proc.stdin.end();
    expect(await again.exited, again.stderr()).toBe(0);
    expect(again.stderr()).toMatch(/"msg":"audit: moved rows into the log from the journal/);
    expect(journaledRows(host.dataDir)).toBe(0);
    expect(auditRows(host.dataDir, `name = 'fx__echo'`)).toMatchObject([
      { transport: 'stdio', decision: 'allowed', outcome: 'ok', arguments: JSON.stringify({ text }) },
    ]);
    // The call the first signal ended with the session: its row had reached the journal too.
    expect(auditRows(host.dataDir, `name = 'fx__slow'`)).toMatchObject([{ transport: 'stdio', outcome: 'cancelled' }]);
    const verified = runCli(['audit', 'verify', '--data-dir', host.dataDir]);
    expect(verified).toMatchObject({ code: 0, stderr: '', stdout: expect.stringMatching(/^ok: \d+ rows, chain intact/) });
  });

  // Relaxed mode has no journal: a row waits in memory for its commit, within flushMs.
  const answeredAndCancelled = `name IN ('fx__echo', 'fx__slow')`;
  /** A call answered, another left running: their rows are what the two signals may lose. */
  const answerOneLeaveOne = async (host: RawHost) => {
    host.send({ jsonrpc: '2.0', id: 'echo', method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'answered before the signals' } } });
    await host.next((l) => !Array.isArray(l) && l.id === 'echo');
    await startLongCall(host);
  };

  it('a second signal while it stops, relaxed audit: the rows still waiting for flushMs are lost, counted in the log line of the exit, in no journal, and the next start finds none', async () => {
    // A move interval far longer than the test: only the shutdown's final commit, which the
    // second signal cuts short, would write the rows.
    const { fx, processes } = lingeringUpstream();
    const host = await launch('2025-06-18', fx, { ...logged, audit: { mode: 'relaxed', flushMs: 60_000 } });
    await answerOneLeaveOne(host);
    expect(await signalTwice(host, processes, 'SIGTERM'), host.stderr()).toEqual({ code: 1, signal: null });
    await eventually(() => processes().length === 0, 15_000, 'the lingering upstream gone');

    expect(journaledRows(host.dataDir)).toBe(0);
    expect(auditRows(host.dataDir, answeredAndCancelled)).toEqual([]);
    // Only the exit's own log line tells of them (the count, for an operator to weigh the
    // gap); the next start has nothing to move, and the chain of what was committed verifies.
    const told = /"auditRowsUncommitted":(\d+).*"msg":"second signal while shutting down: exiting now, [^"]*; (\d+) audit rows not yet committed are lost"/.exec(host.stderr());
    expect(told, host.stderr()).not.toBeNull();
    expect(Number(told![2])).toBe(Number(told![1]));
    expect(Number(told![2])).toBeGreaterThanOrEqual(2);
    const again = spawnHost(stdioFixture(), { ...logged, dataDir: host.dataDir });
    again.proc.stdin.end();
    expect(await again.exited, again.stderr()).toBe(0);
    expect(again.stderr()).not.toMatch(/moved rows into the log from the journal/);
    expect(auditRows(host.dataDir, answeredAndCancelled)).toEqual([]);
    expect(runCli(['audit', 'verify', '--data-dir', host.dataDir])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^ok: \d+ rows?, chain intact/) });
  });

  it('a second signal while it stops, relaxed audit: rows whose flushMs ran out while it stopped were committed, and stay', async () => {
    // The flush timer runs on during the shutdown: the row of the call the first signal
    // cancelled is committed within flushMs, before the second signal comes.
    const { fx, processes } = lingeringUpstream();
    const host = await launch('2025-06-18', fx, { ...logged, audit: { mode: 'relaxed', flushMs: 100 } });
    await answerOneLeaveOne(host);
    const committed = () => eventually(() => auditRows(host.dataDir, answeredAndCancelled).length === 2, 10_000, 'both rows committed while it stops');
    expect(await signalTwice(host, processes, 'SIGTERM', committed), host.stderr()).toEqual({ code: 1, signal: null });
    expect(auditRows(host.dataDir, answeredAndCancelled)).toMatchObject([
      { name: 'fx__echo', outcome: 'ok' },
      { name: 'fx__slow', outcome: 'cancelled' },
    ]);
  });
});

/**
 * An upstream that takes ~4 s to stop: the fixture exits when its stdin closes, and the shell
 * around it then lingers, ignoring SIGTERM, until the SIGKILL after the grace periods. The
 * marker names both in the process table (the fixture ignores its arguments; a loop, not a
 * last command the shell could exec, keeps the shell itself).
 */
function lingeringUpstream(): { fx: unknown; processes: () => string[] } {
  const marker = join(tempDir(), 'lingering-server');
  const fx = { command: 'sh', args: ['-c', `trap '' TERM; "${process.execPath}" "${fixturePath('stdio')}" "${marker}"; while :; do sleep 1; done`] };
  return { fx, processes: () => liveProcesses(marker) };
}

/** Live (not zombie) processes whose command line names `marker`. */
function liveProcesses(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker) && !/^\s*\d+\s+Z/.test(line));
}

/** Starts a call long enough that only a cancellation ends it while a test looks, and waits until the fixture has it. */
async function startLongCall(host: RawHost): Promise<void> {
  host.send({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 120_000 } } });
  // The fixture has the call once it counted one call more than the stats calls asking.
  let asked = 0;
  await eventually(async () => {
    const id = `stats${++asked}`;
    host.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'fx__stats', arguments: {} } });
    const answer = (await host.next((l) => !Array.isArray(l) && l.id === id)) as { result: { content: { text: string }[] } };
    return (JSON.parse(answer.result.content[0].text) as FixtureStatsReport).calls > asked || undefined;
  }, 15_000, 'the slow call to reach the fixture');
}

/** Asked directly once the gateway is gone (whatever it sent has arrived or never will): the fixture was told to cancel the call. */
async function expectCancelledUpstream(fixture: HttpFixture, kind: 'http' | 'sse'): Promise<void> {
  const client = new Client({ name: 'check', version: '1' });
  const url = new URL(fixture.url);
  await client.connect(kind === 'sse' ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url));
  try {
    const stats = await eventually(async () => {
      const result = await client.callTool({ name: 'stats', arguments: {} });
      const report = JSON.parse((result.content as { text: string }[])[0].text) as FixtureStatsReport;
      return report.cancelled > 0 ? report : undefined;
    }, 10_000, 'the fixture to see the call cancelled');
    // Told, not merely left: a server that runs on after a closed connection stops too.
    expect(stats).toMatchObject({ cancelled: 1, cancelNotices: 1 });
  } finally {
    await client.close();
  }
}
