import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AUDIT_ENTITIES, verifyChain } from '@switchboard/audit';
import { MIGRATIONS } from '@switchboard/migrations';
import { openDatabase } from '@switchboard/persistence';
import { afterAll, describe, expect, it } from 'vitest';
import { journaledRows } from './support/audit-rows.js';
import { connectHost } from './support/hosts.js';
import { startDaemon, stdioFixture, stopAllDaemons, tempDir, writeConfig } from './support/daemon.js';
import { runCli } from './support/cli.js';

const HOSTS = 8;

afterAll(stopAllDaemons);

/**
 * The promise of strict mode: an answer a host received is in the log, even when the
 * daemon is killed with SIGKILL in the middle of a burst of concurrent calls (no shutdown
 * flush, no chance to clean up).
 */
describe('audit log across kill -9', () => {
  // normal (the default) commits on the event loop; full commits, with an fsync, in a worker thread.
  it.each(['normal', 'full'] as const)('synchronous %s: holds every call a host saw answered, and the chain verifies after restart', async (synchronous) => {
    const dir = tempDir();
    const configPath = writeConfig({ mcpServers: { fx: stdioFixture() }, audit: { synchronous } }, dir);
    const daemon = await startDaemon(configPath);
    const hosts = await Promise.all(Array.from({ length: HOSTS }, () => connectHost('streamable-http', { daemon })));

    const answered: string[] = [];
    let killed = false;
    const load = hosts.map(async (host, h) => {
      for (let i = 0; !killed; i++) {
        const text = `h${h}-call${i}`;
        try {
          await host.client.callTool({ name: 'fx__echo', arguments: { text } }, { timeout: 5_000 });
          // Even an answer read after the kill was sent before it: it must be in the log too.
          answered.push(text);
        } catch {
          return; // the daemon is gone
        }
      }
    });
    // Let the burst run until a good number of calls are through, then kill without warning.
    while (answered.length < 400) await new Promise((r) => setTimeout(r, 10));
    killed = true;
    daemon.proc.kill('SIGKILL');
    await Promise.all(load);
    await Promise.all(hosts.map((h) => h.close()));

    // The daemon starts again on the same file (SQLite recovers the WAL) and keeps appending.
    const again = await startDaemon(configPath);
    const host = await connectHost('streamable-http', { daemon: again });
    await host.client.callTool({ name: 'fx__echo', arguments: { text: 'after-restart' } });
    await host.close();
    await again.stop();

    const file = join(dir, 'data', 'switchboard.sqlite');
    const db = new Database(file, { readonly: true });
    const logged = new Set(
      (db.prepare(`SELECT arguments FROM audit_record WHERE method = 'tools/call'`).all() as { arguments: string }[]).map(
        (r) => (JSON.parse(r.arguments) as { text: string }).text,
      ),
    );
    db.close();
    const missing = answered.filter((t) => !logged.has(t));
    expect(answered.length).toBeGreaterThanOrEqual(400);
    expect(missing).toEqual([]);
    expect(logged.has('after-restart')).toBe(true);

    const dataSource = await openDatabase({ file, entities: AUDIT_ENTITIES, migrations: MIGRATIONS, readonly: true });
    try {
      expect(await verifyChain(dataSource)).toMatchObject({ ok: true });
    } finally {
      await dataSource.destroy();
    }
  });

  it('rows still in the journal at the kill are moved in by the next start, once each', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    // A move interval far longer than the test: at the kill every row is in the journal only.
    const configPath = writeConfig({ mcpServers: { fx: stdioFixture() }, audit: { flushMs: 60_000 } }, dir);
    const daemon = await startDaemon(configPath);
    const host = await connectHost('streamable-http', { daemon });
    for (let i = 0; i < 20; i++) await host.client.callTool({ name: 'fx__echo', arguments: { text: `journaled ${i}` } });
    // The 20 calls', and the policy/loaded row of the start.
    expect(journaledRows(dataDir)).toBe(21);
    daemon.proc.kill('SIGKILL');
    await host.close().catch(() => undefined);
    await daemon.stop(); // already killed: waits for the exit

    // Until a start moves them, a reader of the database is told where they are.
    const stats = runCli(['audit', 'stats', '--config', configPath]);
    expect(stats.code).toBe(0);
    expect(stats.stderr).toMatch(/warning: 21 audit rows are in the journal of a process that stopped/);

    const again = await startDaemon(configPath);
    await again.waitForLog(/moved rows into the log from the journal/);
    await again.stop();
    const db = new Database(join(dataDir, 'switchboard.sqlite'), { readonly: true });
    const texts = (db.prepare(`SELECT arguments FROM audit_record WHERE method = 'tools/call' ORDER BY id`).all() as { arguments: string }[]).map(
      (r) => (JSON.parse(r.arguments) as { text: string }).text,
    );
    db.close();
    expect(texts).toEqual(Array.from({ length: 20 }, (_, i) => `journaled ${i}`));
    expect(journaledRows(dataDir)).toBe(0);
    const dataSource = await openDatabase({ file: join(dataDir, 'switchboard.sqlite'), entities: AUDIT_ENTITIES, migrations: MIGRATIONS, readonly: true });
    try {
      expect(await verifyChain(dataSource)).toMatchObject({ ok: true });
    } finally {
      await dataSource.destroy();
    }
  });
});
