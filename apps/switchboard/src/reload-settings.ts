import { deepEqual, type GatewayConfig } from '@switchboard/config';

type Setting = keyof GatewayConfig;

/**
 * Every top-level setting by what a reload does with a change of it:
 * - `start`: read once at start; the reload keeps the running value and warns
 *   (restart-notices.ts);
 * - `live`: read from the current config where it is used, so a change holds from the next
 *   request (or the next sweep), with no upstream restarted. Nothing else in the reload log
 *   would show it: the reload names these (changedSettings);
 * - `servers`: compared server by server (diffServers: added, removed, changed, updated);
 * - `file`: the file's own path, the same for every reload of it.
 * Typed over every setting, so a new one does not compile until it is put in one group.
 */
const SETTINGS = {
  source: 'file',
  // In the order the restart warnings are logged.
  listen: 'start',
  audit: 'start',
  auth: 'start',
  log: 'start',
  dataDir: 'start',
  policy: 'start',
  namespace: 'live',
  separator: 'live',
  pageSize: 'live',
  lists: 'live',
  timeouts: 'live',
  security: 'live',
  rateLimits: 'live',
  relay: 'live',
  approvals: 'live',
  servers: 'servers',
} as const satisfies Record<Setting, 'start' | 'live' | 'servers' | 'file'>;

type Kind = (typeof SETTINGS)[Setting];
type SettingsOf<T extends Kind> = { [S in Setting]: (typeof SETTINGS)[S] extends T ? S : never }[Setting];

const settingsOf = <T extends Kind>(kind: T) => (Object.keys(SETTINGS) as Setting[]).filter((s) => SETTINGS[s] === kind) as SettingsOf<T>[];

export type StartOnlySetting = SettingsOf<'start'>;
export type LiveSetting = SettingsOf<'live'>;

/** The settings read only at start. */
export const START_ONLY_SETTINGS: readonly StartOnlySetting[] = settingsOf('start');

/** The settings a reload applies from the next request on, in declaration order. */
export const LIVE_SETTINGS: readonly LiveSetting[] = settingsOf('live');

/** Which of `settings` differ from `before` to `after` (deep comparison), in the order given. */
export function changedSettings<K extends Setting>(before: GatewayConfig, after: GatewayConfig, settings: readonly K[]): K[] {
  return settings.filter((setting) => !deepEqual(before[setting], after[setting]));
}
