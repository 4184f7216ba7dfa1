import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, ConfigErrorCode } from './config.errors.js';
import { type LoadedConfig } from './config.loader.js';
import { type ConfigChange, ConfigWatcher, FileWatcher } from './config.watcher.js';

const DEBOUNCE_MS = 20;
const POLL_MS = 50;
const WAIT_MS = 5_000;

let dir: string;
let file: string;
const watchers: Array<{ stop(): void }> = [];

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
function watchFile(path: string, loadedBytes?: Buffer) {
  const seen: ConfigChange[] = [];
  const waiting: Array<(c: ConfigChange) => void> = [];
  const watcher = new ConfigWatcher(
    path,
    (change) => {
      seen.push(change);
      waiting.shift()?.(change);
    },
    { debounceMs: DEBOUNCE_MS, pollMs: POLL_MS, env: { ARG: 'a.js' } },
  );
  watchers.push(watcher);
  watcher.start(loadedBytes);
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

  it('follows a directory that is deleted and made again (the old watch goes deaf)', async () => {
    const w = watchFile(file);
    rmSync(dir, { recursive: true, force: true });
    expect(failed(await w.next()).code).toBe(ConfigErrorCode.Unreadable);
    mkdirSync(dir);
    writeFileSync(file, config(8));
    expect(loaded(await w.next()).config.pageSize).toBe(8);
    // And the new directory is watched from then on.
    writeFileSync(file, config(9));
    expect(loaded(await w.next()).config.pageSize).toBe(9);
  });

  it('applies an edit saved between the load and the start, instead of taking it for the baseline', async () => {
    const asLoaded = Buffer.from(config(1));
    writeFileSync(file, config(10));
    const w = watchFile(file, asLoaded);
    expect(loaded(await w.next()).config.pageSize).toBe(10);
    const quiet = watchFile(file, Buffer.from(config(10)));
    await afterQuietPeriod();
    expect(quiet.seen).toEqual([]);
  });

  it('a watcher made at the load and started later starts from the bytes loaded', async () => {
    const seen: ConfigChange[] = [];
    const watcher = new ConfigWatcher(file, (c) => seen.push(c), { debounceMs: DEBOUNCE_MS, pollMs: POLL_MS, env: { ARG: 'a.js' } });
    watchers.push(watcher);
    const asLoaded = readFileSync(file);
    writeFileSync(file, config(11));
    watcher.start(asLoaded);
    await vi.waitFor(() => expect(seen).toHaveLength(1), { timeout: WAIT_MS });
    expect(loaded(seen[0]).config.pageSize).toBe(11);
  });

  it('picks changes up by polling where there is no directory to watch at the start', async () => {
    const later = join(dir, 'later');
    const laterFile = join(later, 'switchboard.yaml');
    const w = watchFile(laterFile);
    mkdirSync(later);
    writeFileSync(laterFile, config(12));
    expect(loaded(await w.next()).config.pageSize).toBe(12);
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

describe('ConfigWatcher: a config that is a symlink', () => {
  it('follows a Kubernetes ConfigMap volume: sb.yaml -> ..data/sb.yaml, ..data swapped atomically', async () => {
    const volume = join(dir, 'volume');
    const version = (n: number) => {
      const at = join(volume, `..2024_0${n}`);
      mkdirSync(at, { recursive: true });
      writeFileSync(join(at, 'sb.yaml'), config(n));
      return `..2024_0${n}`;
    };
    symlinkSync(version(1), join(volume, '..data'));
    symlinkSync(join('..data', 'sb.yaml'), join(volume, 'sb.yaml'));
    const w = watchFile(join(volume, 'sb.yaml'));

    for (const n of [2, 3]) {
      // As the kubelet does it: a new directory, a new link to it, renamed over ..data.
      symlinkSync(version(n), join(volume, '..data_tmp'));
      renameSync(join(volume, '..data_tmp'), join(volume, '..data'));
      rmSync(join(volume, `..2024_0${n - 1}`), { recursive: true });
      expect(loaded(await w.next()).config.pageSize).toBe(n);
    }
    expect(w.seen).toHaveLength(2);
  });

  it('follows a dotfiles link: its target edited in place, then saved by rename', async () => {
    const dotfiles = join(dir, 'dotfiles');
    const cfg = join(dir, 'cfg');
    mkdirSync(dotfiles);
    mkdirSync(cfg);
    writeFileSync(join(dotfiles, 'sb.yaml'), config(1));
    symlinkSync(join(dotfiles, 'sb.yaml'), join(cfg, 'sb.yaml'));
    const w = watchFile(join(cfg, 'sb.yaml'));

    writeFileSync(join(dotfiles, 'sb.yaml'), config(2));
    expect(loaded(await w.next()).config.pageSize).toBe(2);

    writeFileSync(join(dotfiles, '.sb.yaml.swp'), config(3));
    renameSync(join(dotfiles, '.sb.yaml.swp'), join(dotfiles, 'sb.yaml'));
    expect(loaded(await w.next()).config.pageSize).toBe(3);
    expect(w.seen).toHaveLength(2);
  });

  it('follows a file that is replaced by a link after the start', async () => {
    const w = watchFile(file);
    const elsewhere = join(dir, 'elsewhere.yaml');
    writeFileSync(elsewhere, config(4));
    symlinkSync(elsewhere, join(dir, 'link.tmp'));
    renameSync(join(dir, 'link.tmp'), file);
    expect(loaded(await w.next()).config.pageSize).toBe(4);
    // Now its target's edits count.
    writeFileSync(elsewhere, config(5));
    expect(loaded(await w.next()).config.pageSize).toBe(5);
  });

  it('does not keep the process alive while polling a link', () => {
    const kinds = new Set(['FSEventWrap', 'Timeout']);
    const handles = () => process.getActiveResourcesInfo().filter((r) => kinds.has(r)).length;
    writeFileSync(join(dir, 'target.yaml'), config(1));
    symlinkSync(join(dir, 'target.yaml'), join(dir, 'linked.yaml'));
    const before = handles();
    watchFile(join(dir, 'linked.yaml'));
    expect(handles()).toBe(before);
  });
});

describe('FileWatcher: nothing escapes its timer', () => {
  /** A watcher with a given load and onChange; resolves what it reported, or times out. */
  function watchWith<T>(load: (file: string, bytes: Buffer) => T, onChange: (change: T | { error: ConfigError }) => void) {
    const watcher = new FileWatcher(file, load, onChange, DEBOUNCE_MS, POLL_MS);
    watchers.push(watcher);
    watcher.start();
    return watcher;
  }

  it('reports an exception other than a ConfigError from the load as a refused change', async () => {
    const changes: Array<string | { error: ConfigError }> = [];
    let fail = true;
    watchWith(
      () => {
        if (fail) throw new RangeError('Maximum call stack size exceeded');
        return 'loaded';
      },
      (change) => changes.push(change),
    );
    writeFileSync(file, config(2));
    await vi.waitFor(() => expect(changes).toHaveLength(1), { timeout: WAIT_MS });
    const { error } = changes[0] as { error: ConfigError };
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.problems).toEqual([{ file, path: '', reason: 'could not be loaded: Maximum call stack size exceeded' }]);

    // And it goes on watching.
    fail = false;
    writeFileSync(file, config(3));
    await vi.waitFor(() => expect(changes).toEqual([changes[0], 'loaded']), { timeout: WAIT_MS });
  });

  it('survives an onChange that throws, and goes on watching', async () => {
    const warned: Error[] = [];
    const onWarning = (w: Error) => warned.push(w);
    process.on('warning', onWarning);
    try {
      let calls = 0;
      watchWith(
        () => 'loaded',
        () => {
          calls++;
          throw new Error('the caller failed');
        },
      );
      writeFileSync(file, config(2));
      await vi.waitFor(() => expect(warned.map((w) => w.message)).toContain('the caller failed'), { timeout: WAIT_MS });
      writeFileSync(file, config(3));
      await vi.waitFor(() => expect(calls).toBe(2), { timeout: WAIT_MS });
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('refuses a config nested thousands deep, with the path, instead of crashing', async () => {
    const deep = join(dir, 'deep.json');
    writeFileSync(deep, JSON.stringify({ mcpServers: { s: { command: 'node' } } }));
    const w = watchFile(deep);
    writeFileSync(deep, `{"mcpServers":{"s":{"command":"node","env":${'{"a":'.repeat(100_000)}"x"${'}'.repeat(100_000)}}}}`);
    const error = failed(await w.next());
    expect(error.code).toBe(ConfigErrorCode.Invalid);
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]!.reason).toBe('nested deeper than 64 levels');
    expect(error.problems[0]!.path).toBe(`mcpServers.s.env${'.a'.repeat(61)}`);
  });
});
