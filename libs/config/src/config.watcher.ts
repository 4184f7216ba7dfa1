import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { ConfigError, ConfigErrorCode } from './config.errors.js';
import { type LoadedConfig, loadConfigBytes } from './config.loader.js';
import { unreadable } from './config.parse.js';

export type ConfigChange = LoadedConfig | { error: ConfigError };

export interface ConfigWatcherOptions {
  /** Quiet time after the last file event before reloading; editors write in bursts. Default 200. */
  debounceMs?: number;
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Reloads a file when it changes (the config, the policy) and reports what `load` made of
 * it, or the ConfigError it threw; the caller keeps what it has on error.
 *
 * It watches the directory, not the file: editors save by writing a temp file and renaming
 * it over the original, and a watch on the original inode would go silent after the first
 * save. Neither the watch nor the debounce timer keeps the process alive.
 */
export class FileWatcher<T> {
  private readonly file: string;
  private readonly name: string;
  private readonly debounceMs: number;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Bytes of the last load; null when the file could not be read then. */
  private last: Buffer | null = null;

  constructor(
    file: string,
    private readonly load: (file: string, bytes: Buffer) => T,
    private readonly onChange: (change: T | { error: ConfigError }) => void,
    debounceMs = 200,
  ) {
    this.file = resolve(file);
    this.name = basename(this.file);
    this.debounceMs = debounceMs;
  }

  /** Takes the file as it is now as the baseline: the caller has just loaded it. */
  start(): void {
    if (this.watcher) return;
    this.last = this.read();
    this.watcher = watch(dirname(this.file), { persistent: false }, (_event, changed) => {
      // Some platforms omit the name; then any event in the directory may be ours.
      if (changed === null || changed === this.name) this.schedule();
    });
    this.watcher.on('error', (err) => {
      this.stop();
      this.onChange({
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
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), this.debounceMs);
    this.timer.unref();
  }

  private reload(): void {
    this.timer = undefined;
    if (!this.watcher) return;
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.file);
    } catch (err) {
      // Report a vanished file once, not on every event in the directory.
      if (this.last === null) return;
      this.last = null;
      this.onChange({ error: unreadable(this.file, err) });
      return;
    }
    // Saving without changes, or touching the file, must not reload anything.
    if (this.last?.equals(bytes)) return;
    this.last = bytes;
    let change: T | { error: ConfigError };
    try {
      change = this.load(this.file, bytes);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      change = { error: err };
    }
    this.onChange(change);
  }

  private read(): Buffer | null {
    try {
      return readFileSync(this.file);
    } catch {
      return null;
    }
  }
}

/** The config file, reloaded when it changes: the new config, or the ConfigError. */
export class ConfigWatcher extends FileWatcher<LoadedConfig> {
  constructor(file: string, onChange: (change: ConfigChange) => void, opts: ConfigWatcherOptions = {}) {
    const env = opts.env ?? process.env;
    super(file, (path, bytes) => loadConfigBytes(path, bytes, env), onChange, opts.debounceMs);
  }
}
