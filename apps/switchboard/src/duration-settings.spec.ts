import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AUDIT_CHECKPOINT_EVERY, AUDIT_RETENTION, ConfigError, loadConfig } from '@switchboard/config';
import { durationMs } from '@switchboard/core';
import { CommandError } from './commands/command-error.js';
import { KEYS_ARGUMENTS } from './commands/keys.js';

/*
 * What the three duration settings accept and refuse: audit.retention (the config, then the
 * daemon and `audit verify` reading it), audit.checkpointEvery (the same) and
 * `keys create --expires`. A cell is the milliseconds read, 'off', or 'refused'; for the
 * config's two, a value the file accepts must also be one the daemon reads ('mismatch' if not).
 * All three read durationMs (libs/core); each keeps its own `off`, shortest and longest (retention: at least 1h).
 */

let dir: string;
let count = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sb-durations-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Cell = number | 'off' | 'refused' | 'mismatch';

/** The config's reasons for refusing `audit.<key>: text`, or its accepted value. */
function loaded(key: 'retention' | 'checkpointEvery', text: string): { value: string } | { reasons: string[] } {
  const file = join(dir, `c${++count}.yaml`);
  writeFileSync(file, `audit: { ${key}: ${JSON.stringify(text)} }\n`);
  try {
    return { value: loadConfig(file, {}).audit[key] };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { reasons: err.problems.map((p) => `${p.path}: ${p.reason}`) };
  }
}

function configCell(key: 'retention' | 'checkpointEvery', text: string, read: (value: string) => number | undefined): Cell {
  const result = loaded(key, text);
  if ('reasons' in result) return 'refused';
  try {
    return read(result.value) ?? 'off';
  } catch {
    return 'mismatch';
  }
}

const retention = (text: string) => configCell('retention', text, (value) => durationMs(value, AUDIT_RETENTION));
const checkpointEvery = (text: string) => configCell('checkpointEvery', text, (value) => durationMs(value, AUDIT_CHECKPOINT_EVERY));

/** `keys create --expires text`: the milliseconds from now, or the usage error's message. */
function expires(text: string): { ms: number } | { message: string } {
  vi.spyOn(Date, 'now').mockReturnValue(1_000_000);
  try {
    return { ms: KEYS_ARGUMENTS.create(['--name', 'k', '--expires', text]).expiresAt! - 1_000_000 };
  } catch (err) {
    if (!(err instanceof CommandError) || err.exitCode !== 2) throw err;
    return { message: err.message };
  } finally {
    vi.restoreAllMocks();
  }
}
const expiresCell = (text: string): Cell => {
  const result = expires(text);
  return 'ms' in result ? result.ms : 'refused';
};

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const W = 7 * D;
const R = 'refused';

describe('duration settings: what each accepts', () => {
  it.each<[string, Cell, Cell, Cell]>([
    //  text          audit.retention  audit.checkpointEvery  --expires
    ['30s', R, 30 * S, 30 * S],
    ['1m', R, M, M],
    ['30m', R, 30 * M, 30 * M],
    ['59m', R, 59 * M, 59 * M],
    ['3599s', R, 3599 * S, 3599 * S],
    ['3600s', H, H, H],
    ['60m', H, H, H],
    ['1h', H, H, H],
    ['12h', 12 * H, 12 * H, 12 * H],
    ['90d', 90 * D, R, 90 * D],
    ['7d', 7 * D, 7 * D, 7 * D],
    ['168h', 168 * H, 168 * H, 168 * H],
    ['604800s', W, W, W],
    ['1w', W, W, W],
    ['2w', 2 * W, R, 2 * W],
    ['8d', 8 * D, R, 8 * D],
    ['604801s', 604_801 * S, R, 604_801 * S],
    ['999999w', 999_999 * W, R, 999_999 * W],
    ['999999s', 999_999 * S, R, 999_999 * S],
    ['007m', R, 7 * M, 7 * M],
    ['001h', H, H, H],
    ['off', 'off', 'off', R],
    ['0s', R, R, R],
    ['0m', R, R, R],
    ['00m', R, R, R],
    ['0d', R, R, R],
    ['0w', R, R, R],
    ['1000000m', R, R, R],
    ['90', R, R, R],
    ['d', R, R, R],
    ['', R, R, R],
    ['1.5h', R, R, R],
    ['-1h', R, R, R],
    ['+1h', R, R, R],
    ['1H', R, R, R],
    ['1 h', R, R, R],
    [' 1h', R, R, R],
    ['1h ', R, R, R],
    ['1h\n', R, R, R],
    ['1d12h', R, R, R],
    ['1y', R, R, R],
    ['3months', R, R, R],
    ['1ms', R, R, R],
    ['OFF', R, R, R],
    ['never', R, R, R],
  ])('%j', (text, retentionMs, checkpointMs, expiresMs) => {
    expect({ retention: retention(text), checkpointEvery: checkpointEvery(text), expires: expiresCell(text) }).toEqual({
      retention: retentionMs,
      checkpointEvery: checkpointMs,
      expires: expiresMs,
    });
  });
});

describe('duration settings: what each says when it refuses', () => {
  it.each([
    ['retention', '3months', "audit.retention: must be a count and a unit (s, m, h, d, w) like '90d', or 'off'"],
    ['retention', '1y', "audit.retention: must be a count and a unit (s, m, h, d, w) like '90d', or 'off'"],
    ['retention', '0d', "audit.retention: must be more than 0 (pruning would remove all but the newest row); 'off' keeps every row"],
    ['retention', '30s', 'audit.retention: must be at least 1h (pruning would delete nearly every row)'],
    ['retention', '59m', 'audit.retention: must be at least 1h (pruning would delete nearly every row)'],
    ['checkpointEvery', 'hourly', "audit.checkpointEvery: must be a count and a unit (s, m, h, d, w) like '1h', or 'off'"],
    ['checkpointEvery', '2w', 'audit.checkpointEvery: must be at most 7d'],
    ['checkpointEvery', '0s', "audit.checkpointEvery: must be more than 0; 'off' logs no checkpoints"],
    ['checkpointEvery', '8d', 'audit.checkpointEvery: must be at most 7d'],
  ] as const)('%s: %j', (key, text, reason) => {
    expect(loaded(key, text)).toEqual({ reasons: [reason] });
  });

  it('a bad config file is refused with every problem listed', () => {
    expect(loaded('retention', '0d')).toEqual({ reasons: [expect.stringMatching(/^audit\.retention: /)] });
    const file = join(dir, 'both.yaml');
    writeFileSync(file, 'audit: { retention: 0d, checkpointEvery: 8d, flushMs: 0 }\n');
    expect(() => loadConfig(file, {})).toThrow(ConfigError);
    try {
      loadConfig(file, {});
    } catch (err) {
      expect((err as ConfigError).problems.map((p) => p.path)).toEqual(['audit.flushMs', 'audit.retention', 'audit.checkpointEvery']);
    }
  });

  it.each([
    ['soon', "--expires 'soon': must be a count and a unit (s, m, h, d, w) like '30d'"],
    ['0d', "--expires '0d': must be more than 0 (leave --expires out for a key that does not expire)"],
    ['off', "--expires 'off': must be a count and a unit (s, m, h, d, w) like '30d'"],
  ])('--expires %j', (text, message) => {
    expect(expires(text)).toEqual({ message });
  });
});
