import { type FSWatcher, lstatSync, readFileSync, realpathSync, statSync, watch } from 'node:fs';
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
}

/**
 * Reloads a file when it changes (the config, the policy) and reports what `load` made of
 * it, or the ConfigError it threw (any other exception is reported as a ConfigError too);
 * the caller keeps what it has on error. Nothing it does can throw out of a timer.
 *
 * It watches the directory, not the file: editors save by writing a temp file and renaming
 * it over the original, and a watch on the original inode would go silent after the first
 * save. When the path goes through a symlink, a change need not touch that directory at
 * all: Kubernetes swaps a `..data` link next to it (`sb.yaml -> ..data/sb.yaml`), and a
 * dotfiles link (`sb.yaml -> ~/dotfiles/sb.yaml`) changes with its target. Then the path is
 * also polled with stat, through the links, every `pollMs`: that follows any chain of
 * links, to a file or a directory, whatever is swapped in it, with no watch to re-arm on
 * directories that come and go (the kubelet deletes the old one), for one stat a second.
 * A different device, inode, size, mtime or ctime counts as a change. Whether to poll is
 * decided again on every reload, so a file replaced by a link is followed too. Changes go
 * through the same debounce and byte comparison either way. Neither the watch nor the
 * timers keep the process alive.
 */
export class FileWatcher<T> {
  private readonly file: string;
  private readonly name: string;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Set while the path goes through a symlink. */
  private poller: NodeJS.Timeout | undefined;
  /** The stat (through the links) at the last poll. */
  private lastStat: string | undefined;
  /** Bytes of the last load; null when the file could not be read then. */
  private last: Buffer | null = null;

  constructor(
    file: string,
    private readonly load: (file: string, bytes: Buffer) => T,
    private readonly onChange: (change: T | { error: ConfigError }) => void,
    private readonly debounceMs = 200,
    private readonly pollMs = 1000,
  ) {
    this.file = resolve(file);
    this.name = basename(this.file);
  }

  /** Takes the file as it is now as the baseline: the caller has just loaded it. */
  start(): void {
    if (this.watcher) return;
    // The stat before the bytes: a change between the two is then seen by the next poll.
    this.followLinks();
    this.last = this.read();
    try {
      this.watcher = watch(dirname(this.file), { persistent: false }, (_event, changed) => {
        // Some platforms omit the name; then any event in the directory may be ours.
        if (changed === null || changed === this.name) this.schedule();
      });
    } catch (err) {
      this.stop();
      throw err;
    }
    this.watcher.on('error', (err) => {
      this.stop();
      this.report({
        error: new ConfigError(ConfigErrorCode.Unreadable, this.file, [
          { file: this.file, path: '', reason: `stopped watching: ${err.message}` },
        ]),
      });
    });
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.watcher?.close();
    this.watcher = undefined;
    clearInterval(this.poller);
    this.poller = undefined;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), this.debounceMs);
    this.timer.unref();
  }

  private reload(): void {
    this.timer = undefined;
    if (!this.watcher) return;
    this.followLinks();
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.file);
    } catch (err) {
      // Report a vanished file once, not on every event in the directory.
      if (this.last === null) return;
      this.last = null;
      this.report({ error: unreadable(this.file, err) });
      return;
    }
    // Saving without changes, or touching the file, must not reload anything.
    if (this.last?.equals(bytes)) return;
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
  }

  private report(change: T | { error: ConfigError }): void {
    try {
      this.onChange(change);
    } catch (err) {
      // The caller's own failure; there is no one else to tell, and it must not end the process.
      process.emitWarning(err instanceof Error ? err : new Error(String(err)), { code: 'SWITCHBOARD_WATCHER' });
    }
  }

  /** Polls the path while it goes through a symlink (see the class comment). */
  private followLinks(): void {
    const linked = this.throughLink();
    if (linked && !this.poller) {
      this.lastStat = this.stat();
      this.poller = setInterval(() => this.poll(), this.pollMs);
      this.poller.unref();
    } else if (!linked && this.poller) {
      clearInterval(this.poller);
      this.poller = undefined;
    }
  }

  private poll(): void {
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

  private throughLink(): boolean {
    try {
      return realpathSync(this.file) !== this.file;
    } catch {
      // A link to nothing (mid-swap) is still a link; a missing file leaves things as they are.
      try {
        return lstatSync(this.file).isSymbolicLink();
      } catch {
        return this.poller !== undefined;
      }
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

function failedLoad(file: string, err: unknown): ConfigError {
  const reason = err instanceof Error ? err.message : String(err);
  return new ConfigError(ConfigErrorCode.Invalid, file, [{ file, path: '', reason: `could not be loaded: ${reason}` }]);
}

/** The config file, reloaded when it changes: the new config, or the ConfigError. */
export class ConfigWatcher extends FileWatcher<LoadedConfig> {
  constructor(file: string, onChange: (change: ConfigChange) => void, opts: ConfigWatcherOptions = {}) {
    const env = opts.env ?? process.env;
    super(file, (path, bytes) => loadConfigBytes(path, bytes, env), onChange, opts.debounceMs, opts.pollMs);
  }
}
