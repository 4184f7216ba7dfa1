import { type FSWatcher, readFileSync, statSync, watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { ConfigError, ConfigErrorCode } from './config.errors.js';
import { type LoadedConfig, loadConfigBytes } from './config.loader.js';
import { unreadable } from './config.parse.js';

export type ConfigChange = LoadedConfig | { error: ConfigError };

export interface ConfigWatcherOptions {
  /** Quiet time after the last file event before reloading; editors write in bursts. Default 200. */
  debounceMs?: number;
  /** How often a path that goes through a symlink is looked at (see FileWatcher). Default 1000. */
  pollMs?: number;
  env?: Readonly<Record<string, string | undefined>>;
  /** Told when the directory watch fails and polling alone carries on. */
  notice?: (message: string) => void;
}

/**
 * Reloads a file when it changes (the config, the policy) and reports what `load` made of
 * it, or the ConfigError it threw (any other exception is reported as a ConfigError too);
 * the caller keeps what it has on error. Nothing it does can throw out of a timer.
 *
 * It watches the directory, not the file: editors save by writing a temp file and renaming
 * it over the original, and a watch on the original inode would go silent after the first
 * save. A directory watch has its own blind spots: a change need not touch that directory
 * (Kubernetes swaps a `..data` link next to it, `sb.yaml -> ..data/sb.yaml`; a dotfiles
 * link changes with its target), the directory itself can be replaced (`rm -rf conf;
 * mkdir conf`, a deploy that swaps it), and the kernel can refuse a watch (ENOSPC when the
 * inotify limit is reached). So the path is also polled with stat, through any links,
 * every `pollMs`, whatever it is: a different device, inode, size, mtime or ctime counts as
 * a change, and a directory that is not the one watched gets a new watch. The watch makes
 * reloads prompt; the poll makes them certain, for one stat a second. Changes go through
 * the same debounce and byte comparison either way. Neither the watch nor the timers keep
 * the process alive.
 */
export class FileWatcher<T> {
  private readonly file: string;
  private readonly name: string;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  /** The stat (through the links) at the last poll. */
  private lastStat: string | undefined;
  /**
   * The identity (device and inode) of the directory last watched, or tried: a watch the
   * kernel refused is not asked for again every poll, only for a different directory.
   */
  private armedFor: string | undefined;
  private running = false;
  /** Bytes of the last load; null when the file could not be read then. */
  private last: Buffer | null = null;

  constructor(
    file: string,
    private readonly load: (file: string, bytes: Buffer) => T,
    private readonly onChange: (change: T | { error: ConfigError }) => void,
    private readonly debounceMs = 200,
    private readonly pollMs = 1000,
    /** Told when the directory watch fails (the poll carries on): for the daemon's log. */
    private readonly notice: (message: string) => void = () => undefined,
  ) {
    this.file = resolve(file);
    this.name = basename(this.file);
  }

  /**
   * Starts watching. `loaded` is the bytes the caller loaded, when it has them: a change
   * saved between that load and this start is then reloaded at once rather than taken for
   * the baseline (a daemon takes a second or two to start). Without it, the file as it is
   * now is the baseline.
   */
  start(loaded?: Buffer): void {
    if (this.running) return;
    this.running = true;
    // The stat before the bytes: a change between the two is then seen by the next poll.
    this.lastStat = this.stat();
    const now = this.read();
    this.last = loaded ?? now;
    this.armWatch();
    this.poller = setInterval(() => this.poll(), this.pollMs);
    this.poller.unref();
    if (loaded && !(now && loaded.equals(now))) this.schedule();
  }

  /**
   * Reads the file now (SIGHUP), without waiting for the watch's debounce or the poll.
   * Returns whether that found a change to report (a new version, or the file gone).
   */
  checkNow(): boolean {
    if (!this.running) return false;
    clearTimeout(this.timer);
    return this.reload();
  }

  stop(): void {
    this.running = false;
    this.armedFor = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.closeWatch();
    clearInterval(this.poller);
    this.poller = undefined;
  }

  /** A watch on the file's directory as it is now; on failure the poll alone carries on. */
  private armWatch(): void {
    this.closeWatch();
    const dir = dirname(this.file);
    const identity = directoryIdentity(dir);
    if (identity === undefined) return; // no directory (yet): the poll arms once there is one
    this.armedFor = identity;
    try {
      this.watcher = watch(dir, { persistent: false }, (_event, changed) => {
        // Some platforms omit the name; then any event in the directory may be ours.
        if (changed === null || changed === this.name) this.schedule();
      });
    } catch (err) {
      this.notice(`cannot watch ${dir} (${(err as Error).message}); changes are picked up by polling every ${this.pollMs} ms`);
      return;
    }
    this.watcher.on('error', (err) => {
      this.closeWatch();
      this.notice(`stopped watching ${dir} (${err.message}); changes are picked up by polling every ${this.pollMs} ms`);
    });
  }

  private closeWatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), this.debounceMs);
    this.timer.unref();
  }

  /** Whether there was a change to report. */
  private reload(): boolean {
    this.timer = undefined;
    if (!this.running) return false;
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.file);
    } catch (err) {
      // Report a vanished file once, not on every event in the directory.
      if (this.last === null) return false;
      this.last = null;
      this.report({ error: unreadable(this.file, err) });
      return true;
    }
    // Saving without changes, or touching the file, must not reload anything.
    if (this.last?.equals(bytes)) return false;
    this.last = bytes;
    let change: T | { error: ConfigError };
    try {
      change = this.load(this.file, bytes);
    } catch (err) {
      // Not a ConfigError: a bug in `load` (or a file it could not cope with). Thrown from
      // this timer it would end the daemon; the change is refused like any bad file.
      change = { error: err instanceof ConfigError ? err : failedLoad(this.file, err) };
    }
    this.report(change);
    return true;
  }

  private report(change: T | { error: ConfigError }): void {
    try {
      this.onChange(change);
    } catch (err) {
      // The caller's own failure; there is no one else to tell, and it must not end the process.
      process.emitWarning(err instanceof Error ? err : new Error(String(err)), { code: 'SWITCHBOARD_WATCHER' });
    }
  }

  private poll(): void {
    // A replaced (or re-created) directory leaves the old watch deaf: watch the new one.
    const dir = directoryIdentity(dirname(this.file));
    if (dir !== undefined && dir !== this.armedFor) this.armWatch();
    const now = this.stat();
    if (now === this.lastStat) return;
    this.lastStat = now;
    this.schedule();
  }

  /** What identifies the file's version, through the links; undefined when it cannot be had. */
  private stat(): string | undefined {
    try {
      const s = statSync(this.file, { bigint: true, throwIfNoEntry: false });
      return s && `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    } catch {
      return undefined;
    }
  }

  private read(): Buffer | null {
    try {
      return readFileSync(this.file);
    } catch {
      return null;
    }
  }
}

/** Device and inode of a directory; undefined when there is none. */
function directoryIdentity(dir: string): string | undefined {
  try {
    const s = statSync(dir, { bigint: true, throwIfNoEntry: false });
    return s?.isDirectory() ? `${s.dev}:${s.ino}` : undefined;
  } catch {
    return undefined;
  }
}

function failedLoad(file: string, err: unknown): ConfigError {
  const reason = err instanceof Error ? err.message : String(err);
  return new ConfigError(ConfigErrorCode.Invalid, file, [{ file, path: '', reason: `could not be loaded: ${reason}` }]);
}

/** The config file, reloaded when it changes: the new config, or the ConfigError. */
export class ConfigWatcher extends FileWatcher<LoadedConfig> {
  constructor(file: string, onChange: (change: ConfigChange) => void, opts: ConfigWatcherOptions = {}) {
    const env = opts.env ?? process.env;
    super(file, (path, bytes) => loadConfigBytes(path, bytes, env), onChange, opts.debounceMs, opts.pollMs, opts.notice);
  }
}
