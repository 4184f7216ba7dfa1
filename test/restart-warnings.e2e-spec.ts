import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, logEntries, startDaemon, stopAllDaemons, tempDir, writeConfig, type DaemonHandle } from './support/daemon.js';

/**
 * The "takes effect after a restart" warnings of a live reload. A setting the daemon reads
 * only at start (audit, auth, log.level, policy's file and default) is said once per edit
 * that changes it: not again at every later reload, whatever triggered that reload, and
 * again for a second edit that changes it once more.
 *
 * Each edit replaces the file the way `sed -i` does: a temp file written next to it, then
 * renamed over it. One daemon, the steps in file order.
 */

type Json = Record<string, unknown>;

const WARNINGS = {
  audit: 'new audit settings take effect after a restart',
  auth: 'new auth settings take effect after a restart',
  log: 'a new log level takes effect after a restart',
  policy: 'a new policy file path or default effect takes effect after a restart (edits to the file apply at once)',
} as const;

let dir: string;
let file: string;
let daemon: DaemonHandle;

/** The file as writeConfig writes it, with `settings` over it; info level for the "config reloaded" lines. */
function fileText(settings: Json): string {
  return JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, dataDir: join(dir, 'data'), log: { level: 'info' }, mcpServers: {}, ...settings }, null, 2);
}

/** As `sed -i` saves: a temp file in the same directory, renamed over the file. */
function replaceFile(text: string): void {
  const tmp = join(dirname(file), 'sedX1y2Z3');
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/**
 * Replaces the file and waits until the daemon has applied it: its "config reloaded" line is
 * logged after the restart warnings of the same reload, so they are all in the log by then.
 * A later reload's line also means every event of this edit has been handled.
 */
async function edit(settings: Json): Promise<void> {
  const reloads = logEntries(daemon, 'config reloaded').length;
  replaceFile(fileText(settings));
  await eventually(() => logEntries(daemon, 'config reloaded').length > reloads, 15_000, 'the edit applied');
}

const counts = () => Object.fromEntries(Object.entries(WARNINGS).map(([key, msg]) => [key, logEntries(daemon, msg).length]));

/** Every restart-needing setting changed from what the daemon started with. */
const changed = (flushMs: number): Json => ({
  audit: { flushMs },
  auth: { authorizationServers: ['https://as.example.com'] },
  log: { level: 'debug' },
  policy: { defaultEffect: 'deny' },
});

beforeAll(async () => {
  dir = tempDir('sb-restart-warnings-');
  file = writeConfig({ log: { level: 'info' }, audit: { flushMs: 200 }, mcpServers: {} }, dir);
  daemon = await startDaemon(file);
});
afterAll(async () => {
  await stopAllDaemons();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('settings read only at start, edited while the daemon runs', () => {
  it('one edit of each is warned of once, and a later edit of something else does not repeat it', async () => {
    await edit(changed(300));
    expect(counts()).toEqual({ audit: 1, auth: 1, log: 1, policy: 1 });
    // A change the running daemon applies (pageSize): a reload, with nothing new to restart for.
    await edit({ ...changed(300), pageSize: 100 });
    expect(counts()).toEqual({ audit: 1, auth: 1, log: 1, policy: 1 });
  });

  it('a second, different edit of one of them is warned of again; the others are not', async () => {
    await edit({ ...changed(400), pageSize: 100 });
    expect(counts()).toEqual({ audit: 2, auth: 1, log: 1, policy: 1 });
    expect(logEntries(daemon, WARNINGS.audit).map((e) => (e.audit as Json).flushMs)).toEqual([300, 400]);
  });

  it('an edit back to what the daemon runs with needs no restart, and a change after it is warned of', async () => {
    await edit({ ...changed(400), audit: { flushMs: 200 }, pageSize: 100 });
    expect(counts()).toEqual({ audit: 2, auth: 1, log: 1, policy: 1 });
    await edit({ ...changed(300), pageSize: 100 });
    expect(counts()).toEqual({ audit: 3, auth: 1, log: 1, policy: 1 });
  });
});
