import type { GatewayConfig } from '@switchboard/config';
import { changedSettings, START_ONLY_SETTINGS, type StartOnlySetting } from './reload-settings.js';

/** A warning for the log: its fields and its message. */
export type RestartNotice = [fields: Record<string, unknown>, message: string];

/** What the log says of a new value in the file; `running` is the config the daemon runs with. */
type Notice = (next: GatewayConfig, running: GatewayConfig, atStart: GatewayConfig) => RestartNotice | undefined;

/**
 * The settings the daemon reads only at start (reload-settings.ts): the listener cannot move,
 * the audit log and authentication stay as opened (auth.mode was checked against the listen
 * address), and the upstreams' loggers are children made at their start, so one level for all
 * needs a restart.
 */
const NOTICES: Record<StartOnlySetting, Notice> = {
  listen: (next) => [{ listen: next.listen }, 'a new listen address takes effect after a restart'],
  audit: (next) => [{ audit: next.audit }, 'new audit settings take effect after a restart'],
  auth: (next) => [{ auth: next.auth }, 'new auth settings take effect after a restart'],
  // Not `level`: that is the line's own level field in pino's JSON.
  log: (next) => [{ newLevel: next.log.level }, 'a new log level takes effect after a restart'],
  // The audit database and the keys stay where they were opened; commands run with the
  // new file would use another database than the daemon's.
  dataDir: (next, running, atStart) => {
    // Already what runs (an edit to the dir --data-dir gave): nothing to restart for.
    if (next.dataDir === running.dataDir) return undefined;
    const fields = { dataDir: next.dataDir, inUse: running.dataDir };
    return running.dataDir !== atStart.dataDir
      ? [fields, "a new dataDir in the file: the command line's --data-dir overrides it, now and at a restart with the same command line"]
      : [fields, 'a new dataDir takes effect after a restart; until then the daemon keeps using the old one'];
  },
  policy: (next) => [{ policy: next.policy }, 'a new policy file path or default effect takes effect after a restart (edits to the file apply at once)'],
};

/**
 * What a reload says of the settings read only at start: once per edit that changes one. Each
 * is compared with the file as last loaded, not with what runs, which a reload never changes:
 * compared with that, every later reload (another setting edited, a comment, a save in two
 * steps) said it again. A second edit that changes it again is said again; an edit back to
 * what the file said at start needs no restart, and says nothing.
 */
export class RestartNotices {
  private lastLoaded: GatewayConfig;

  /** `fileAtStart`: the file's config as the daemon started from it, before command-line overrides (--port, --data-dir). */
  constructor(
    private readonly fileAtStart: GatewayConfig,
    private readonly running: () => GatewayConfig,
  ) {
    this.lastLoaded = fileAtStart;
  }

  /** The notices for `next`, the file just loaded; it becomes the file last loaded. */
  changedBy(next: GatewayConfig): RestartNotice[] {
    const edited = changedSettings(this.lastLoaded, next, START_ONLY_SETTINGS);
    this.lastLoaded = next;
    const notices: RestartNotice[] = [];
    for (const setting of changedSettings(this.fileAtStart, next, edited)) {
      const notice = NOTICES[setting](next, this.running(), this.fileAtStart);
      if (notice) notices.push(notice);
    }
    return notices;
  }
}
