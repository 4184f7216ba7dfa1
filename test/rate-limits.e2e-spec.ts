import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { connectHost } from './support/hosts.js';
import { eventually, startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig } from './support/daemon.js';
import { fixturePath } from '@switchboard/testing';
import { auditRows } from './support/audit-rows.js';



async function refusal(call: Promise<unknown>): Promise<ProtocolError> {
  const error = await call.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ProtocolError);
  return error as ProtocolError;
}

afterAll(stopAllDaemons);

/** The limits through the real daemon, on the real clock: windows of one second. */
describe('rate limits', () => {
  it('a tool bucket refuses the call past its points with -31429 and retryAfterMs, audits it, and refills', async () => {
    const dir = tempDir();
    const daemon = await startDaemon(
      writeConfig({ rateLimits: { perPrincipalTool: { points: 2, durationSec: 1 } }, mcpServers: { fx: stdioFixture() } }, dir),
    );
    const host = await connectHost('streamable-http', { daemon });
    // A window opens with its bucket's first call (not on the clock's second), and must hold
    // all three: sent at once, they reach the limiter within milliseconds of each other, not
    // two upstream round trips apart, which a loaded machine can stretch past the second.
    const settled = await Promise.allSettled(
      ['one', 'two', 'three'].map((text) => host.client.callTool({ name: 'fx__echo', arguments: { text } })),
    );
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(2);
    const refused = settled.filter((s) => s.status === 'rejected');
    expect(refused).toHaveLength(1);
    const error = (refused[0] as PromiseRejectedResult).reason as ProtocolError;
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.code).toBe(-31429);
    expect(error.message).toMatch(/limit of 2 calls per principal of tool 'fx__echo' per 1 second reached; retry in /);
    const retryAfterMs = (error.data as { retryAfterMs: number }).retryAfterMs;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(1000);
    // The message names the same wait, never less: in milliseconds while under a second.
    expect(error.message).toMatch(retryAfterMs < 1000 ? new RegExp(`; retry in ${Math.ceil(retryAfterMs)} ms$`) : /; retry in 1 s$/);
    // Other tools have their own bucket.
    await host.client.callTool({ name: 'fx__add', arguments: { a: 1, b: 2 } });

    const [limited] = auditRows(join(dir, 'data'), `decision = 'limited'`);
    expect(limited).toMatchObject({
      method: 'tools/call',
      name: 'fx__echo',
      upstream: 'fx',
      rule: 'limit:principal-tool',
      outcome: null,
      error_code: -31429,
      principal: 'anonymous',
    });

    // Kept on purpose: this wait is what is checked (a host that waits retryAfterMs is served).
    // Waiting longer, as a loaded machine may, only makes that more certain; the 50 ms cover
    // the rounding of the limiter's clock.
    await new Promise((r) => setTimeout(r, retryAfterMs + 50));
    await host.client.callTool({ name: 'fx__echo', arguments: { text: 'four' } });
    await host.close();
  });

  it('upstream concurrency: a call beyond the cap is refused while the others run; they all finish', async () => {
    const daemon = await startDaemon({ rateLimits: { upstreamConcurrency: 2 }, mcpServers: { fx: stdioFixture() } });
    const hosts = await Promise.all([0, 1, 2].map(() => connectHost('streamable-http', { daemon })));
    const slow = hosts.slice(0, 2).map((h) => h.client.callTool({ name: 'fx__slow', arguments: { ms: 3_000 } }));
    let slowSettled = false;
    void Promise.allSettled(slow).then(() => (slowSettled = true));
    // No fixed sleep: on a loaded CI box the slow calls can take a while to reach the daemon.
    // Until both have, the third host's call is served; the first one after is refused.
    const error = await eventually(
      () => hosts[2].client.callTool({ name: 'fx__echo', arguments: { text: 'third' } }).then(() => undefined, (err: unknown) => err),
      2_500,
      'a call beyond the cap to be refused',
    );
    expect(slowSettled).toBe(false);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-31429);
    // The concurrency cap's hint is a quarter of a second, and the message says so: rounded up
    // to whole seconds it read "retry in 1 s", four times the wait in data.retryAfterMs.
    expect((error as ProtocolError).message).toMatch(/upstream 'fx' already has 2 calls in flight; retry in 250 ms$/);
    expect((error as ProtocolError).data).toEqual({ retryAfterMs: 250 });
    const done = await Promise.all(slow);
    expect(done.map((r) => r.isError ?? false)).toEqual([false, false]);
    // The slots are free again.
    await hosts[2].client.callTool({ name: 'fx__echo', arguments: { text: 'now' } });
    await Promise.all(hosts.map((h) => h.close()));
  });

  it("per-principal concurrency: a caller's call beyond its own cap is refused and audited, though the upstream has room; served once its call ends", async () => {
    const dir = tempDir();
    const daemon = await startDaemon(writeConfig({ rateLimits: { perPrincipalConcurrency: 1, upstreamConcurrency: 8 }, mcpServers: { fx: stdioFixture() } }, dir));
    // With auth.mode none every loopback host is one caller; two of its sessions share the cap.
    const [busy, again] = await Promise.all([0, 1].map(() => connectHost('streamable-http', { daemon })));
    const slow = busy.client.callTool({ name: 'fx__slow', arguments: { ms: 3_000 } });
    let slowSettled = false;
    void slow.then(() => (slowSettled = true), () => (slowSettled = true));
    const error = await eventually(
      () => again.client.callTool({ name: 'fx__echo', arguments: { text: 'second' } }).then(() => undefined, (err: unknown) => err),
      2_500,
      "a call beyond the caller's cap to be refused",
    );
    expect(slowSettled).toBe(false);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-31429);
    expect((error as ProtocolError).message).toMatch(/you already have 1 call in flight to upstream 'fx'; retry in 250 ms$/);
    expect((error as ProtocolError).data).toEqual({ retryAfterMs: 250 });
    expect((await slow).isError ?? false).toBe(false);
    await again.client.callTool({ name: 'fx__echo', arguments: { text: 'now' } });
    const [limited] = await eventually(() => {
      const rows = auditRows(join(dir, 'data'), `decision = 'limited'`);
      return rows.length > 0 ? rows : undefined;
    }, 10_000, 'the limited row');
    expect(limited).toMatchObject({ method: 'tools/call', name: 'fx__echo', upstream: 'fx', rule: 'limit:principal-concurrency', principal: 'anonymous' });
    await Promise.all([busy, again].map((h) => h.close()));
  });

  it('a refused call starts no per-session upstream process: the limits are decided before the connection is opened', async () => {
    const dir = tempDir();
    // Each start of the server's process appends a line here, before the fixture runs.
    const starts = join(dir, 'starts.log');
    const preload = join(dir, 'count-start.cjs');
    writeFileSync(preload, `require('node:fs').appendFileSync(${JSON.stringify(starts)}, 'start\\n');\n`);
    const own = { command: process.execPath, args: ['-r', preload, fixturePath('stdio')], env: { FIXTURE_NAME: 'own' }, isolation: 'per-session' };
    const daemon = await startDaemon(
      writeConfig({ rateLimits: { perPrincipal: { points: 2, durationSec: 60 } }, mcpServers: { own } }, dir),
    );
    const startCount = () => readFileSync(starts, 'utf8').split('\n').filter(Boolean).length;
    const first = await connectHost('streamable-http', { daemon });
    await eventually(async () => (await first.client.listTools()).tools.some((t) => t.name === 'own__echo'), 15_000, 'own__echo listed');
    await first.client.callTool({ name: 'own__echo', arguments: { text: 'one' } });
    await first.client.callTool({ name: 'own__echo', arguments: { text: 'two' } });
    // The registry's connection that reads the lists, and the first session's own.
    expect(startCount()).toBe(2);

    const others = await Promise.all([0, 1, 2, 3, 4].map(() => connectHost('streamable-http', { daemon })));
    for (const host of others) {
      const error = await refusal(host.client.callTool({ name: 'own__echo', arguments: { text: 'over' } }));
      expect(error.code).toBe(-31429);
    }
    expect(startCount()).toBe(2);
    // Their audit rows still name the upstream the call was for.
    const limited = auditRows(join(dir, 'data'), `decision = 'limited'`);
    expect(limited).toHaveLength(5);
    for (const row of limited) expect(row).toMatchObject({ name: 'own__echo', upstream: 'own', original_name: 'echo', rule: 'limit:principal' });
    await Promise.all([first, ...others].map((h) => h.close()));
  });
});
