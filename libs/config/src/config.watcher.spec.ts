import { mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, ConfigErrorCode } from './config.errors.js';
import { type LoadedConfig } from './config.loader.js';
import { type ConfigChange, ConfigWatcher } from './config.watcher.js';

const DEBOUNCE_MS = 20;
const WAIT_MS = 5_000;

let dir: string;
let file: string;
const watchers: ConfigWatcher[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-config-watch-'));
  file = join(dir, 'switchboard.yaml');
  writeFileSync(file, config(1));
});
afterEach(() => {
  for (const w of watchers.splice(0)) w.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A valid file told apart by its pageSize. */
const config = (pageSize: number) => `pageSize: ${pageSize}\nmcpServers:\n  s: { command: node, args: ["\${ARG}"] }\n`;

/** A started watcher whose changes can be awaited one by one. */
function watchFile(path: string) {
  const seen: ConfigChange[] = [];
  const waiting: Array<(c: ConfigChange) => void> = [];
  const watcher = new ConfigWatcher(
    path,
    (change) => {
      seen.push(change);
      waiting.shift()?.(change);
    },
    { debounceMs: DEBOUNCE_MS, env: { ARG: 'a.js' } },
  );
  watchers.push(watcher);
  watcher.start();
  let taken = 0;
  const next = (): Promise<ConfigChange> => {
    const ready = seen[taken];
    if (ready) {
      taken++;
      return Promise.resolve(ready);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no change reported for ${path}`)), WAIT_MS);
      waiting.push((change) => {
        clearTimeout(timer);
        taken++;
        resolve(change);
      });
    });
  };
  return { watcher, seen, next };
}

function loaded(change: ConfigChange): LoadedConfig {
  if ('error' in change) throw change.error;
  return change;
}

function failed(change: ConfigChange): ConfigError {
  if (!('error' in change)) throw new Error(`expected an error, got pageSize ${change.config.pageSize}`);
  return change.error;
}

/**
 * Proves a watcher did nothing: a second watcher with the same debounce, on another file in
 * the same directory, is written after it, so its report comes after any report of the first.
 */
async function afterQuietPeriod(): Promise<void> {
  const clockFile = join(dir, 'clock.yaml');
  writeFileSync(clockFile, config(1));
  const clock = watchFile(clockFile);
  writeFileSync(clockFile, config(2));
  await clock.next();
}

describe('ConfigWatcher', () => {
  it('reports the new config when the file changes, with the given environment', async () => {
    const w = watchFile(file);
    writeFileSync(file, config(2));
    const { config: next, warnings } = loaded(await w.next());
    expect(next.pageSize).toBe(2);
    expect(next.servers[0]).toMatchObject({ args: ['a.js'] });
    expect(warnings).toEqual([]);
  });

  it('reports a ConfigError for an invalid rewrite, then recovers', async () => {
    const w = watchFile(file);
    writeFileSync(file, 'pageSize: 0\n');
    const error = failed(await w.next());
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.problems).toEqual([{ file, path: 'pageSize', reason: 'must be an integer from 1 to 1000' }]);

    writeFileSync(file, config(3));
    expect(loaded(await w.next()).config.pageSize).toBe(3);
  });

  it('follows a file replaced by rename, as editors save', async () => {
    const w = watchFile(file);
    for (const pageSize of [4, 5]) {
      const temp = join(dir, `.switchboard.yaml.${pageSize}.tmp`);
      writeFileSync(temp, config(pageSize));
      renameSync(temp, file);
      expect(loaded(await w.next()).config.pageSize).toBe(pageSize);
    }
  });

  it('ignores a write that leaves the bytes as they were', async () => {
    const w = watchFile(file);
    writeFileSync(file, config(1));
    await afterQuietPeriod();
    expect(w.seen).toEqual([]);

    writeFileSync(file, config(6));
    expect(loaded(await w.next()).config.pageSize).toBe(6);
    expect(w.seen).toHaveLength(1);
  });

  it('reports a deleted file once, then the file when it comes back', async () => {
    const w = watchFile(file);
    unlinkSync(file);
    expect(failed(await w.next()).code).toBe(ConfigErrorCode.Unreadable);
    writeFileSync(file, config(1));
    expect(loaded(await w.next()).config.pageSize).toBe(1);
    expect(w.seen).toHaveLength(2);
  });

  it('reports nothing after stop()', async () => {
    const w = watchFile(file);
    w.watcher.stop();
    writeFileSync(file, config(7));
    await afterQuietPeriod();
    expect(w.seen).toEqual([]);
  });

  it('does not keep the process alive', () => {
    const handles = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;
    const before = handles();
    watchFile(file);
    expect(handles()).toBe(before);
  });
});
