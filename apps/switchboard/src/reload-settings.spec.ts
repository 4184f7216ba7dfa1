import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type GatewayConfig } from '@switchboard/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changedSettings, LIVE_SETTINGS, START_ONLY_SETTINGS } from './reload-settings.js';
import { RestartNotices } from './restart-notices.js';

let dir: string;
let count = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-reload-settings-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A config as the loader makes it from this YAML, always in the same directory. */
function config(yaml: string, servers = 'a: { command: node }'): GatewayConfig {
  const file = join(dir, `c${++count}.yaml`);
  writeFileSync(file, `dataDir: ./data\nmcpServers: { ${servers} }\n${yaml}`);
  return { ...loadConfig(file, {}), source: join(dir, 'switchboard.yaml') };
}

describe('changedSettings', () => {
  it('names a live setting changed alone, and nothing for an equal config', () => {
    const before = config('');
    expect(changedSettings(before, config('rateLimits: { perPrincipal: { points: 5, durationSec: 60 } }\n'), LIVE_SETTINGS)).toEqual(['rateLimits']);
    expect(changedSettings(before, config(''), LIVE_SETTINGS)).toEqual([]);
  });

  it('names each live setting changed, in a fixed order, and neither start-only settings nor servers', () => {
    const before = config('');
    const after = config('relay: { timeoutMs: 5000 }\nsecurity: { allowedHosts: [gw.example] }\nlog: { level: debug }\n', 'a: { command: node }, b: { command: node }');
    expect(changedSettings(before, after, LIVE_SETTINGS)).toEqual(['security', 'relay']);
    expect(changedSettings(before, after, START_ONLY_SETTINGS)).toEqual(['log']);
  });
});

describe('RestartNotices, on the same comparison', () => {
  it('warns once per edit of a start-only setting, and not for a live one', () => {
    const atStart = config('');
    const notices = new RestartNotices(atStart, () => atStart);
    expect(notices.changedBy(config('rateLimits: { upstreamConcurrency: 4 }\n'))).toEqual([]);
    const debug = config('log: { level: debug }\n');
    expect(notices.changedBy(debug)).toEqual([[{ newLevel: 'debug' }, 'a new log level takes effect after a restart']]);
    expect(notices.changedBy(debug)).toEqual([]);
    // Back to what the daemon runs with: nothing to restart for.
    expect(notices.changedBy(config(''))).toEqual([]);
  });

  it('a dataDir the command line overrides (--data-dir): the edit is said to be overridden, and nothing when it names what runs', () => {
    const atStart = config('');
    const running = { ...atStart, dataDir: join(dir, 'moved') };
    const notices = new RestartNotices(atStart, () => running);
    expect(notices.changedBy({ ...atStart, dataDir: join(dir, 'moved') })).toEqual([]);
    const elsewhere = { ...atStart, dataDir: join(dir, 'elsewhere') };
    expect(notices.changedBy(elsewhere)).toEqual([
      [{ dataDir: join(dir, 'elsewhere'), inUse: join(dir, 'moved') }, "a new dataDir in the file: the command line's --data-dir overrides it, now and at a restart with the same command line"],
    ]);
  });
});
