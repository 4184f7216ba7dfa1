import { describe, expect, it } from 'vitest';
import { whereCheckpointsComeFrom } from './audit-checkpoints-file.js';
import { formatCheckpoints, formatPruning } from './audit-verify.js';

const AT = Date.UTC(2026, 10, 21, 10, 0);
const DAY = 86_400_000;

describe('formatPruning', () => {
  it('names the marker row that accounts for the pruned rows, and its cut-off', () => {
    expect(formatPruning({ markerId: 13, markerAt: AT, format: 'anchored', throughId: 10, before: AT - 90 * DAY })).toBe(
      'pruned: rows through id 10, accounted for by the audit/pruned row 13 written 2026-11-21T10:00:00.000Z, cut-off 2026-08-23T10:00:00.000Z',
    );
  });

  it('says when a run is still under way, and when the marker is of the older format', () => {
    expect(formatPruning({ markerId: 31, markerAt: AT, format: 'anchored', throughId: 3, before: AT, inProgressThroughId: 20 })).toMatch(
      /; a run is still pruning through id 20$/,
    );
    expect(formatPruning({ markerId: 13, markerAt: AT, format: 'legacy', throughId: 10 })).toMatch(
      /no cut-off recorded \(older marker format: its id is matched, it records no hash\)$/,
    );
  });
});

describe('formatCheckpoints', () => {
  const newest = { id: 30714, hash: 'ab'.repeat(32), at: AT };

  it('says the chain holds up to the newest checkpoint, and how many were checked and how', () => {
    expect(formatCheckpoints({ checked: 1, matched: 1, pruned: 0, newestMatched: newest, problems: {}, headId: 30714 })).toBe(
      'checkpoints: the chain holds up to the newest checkpoint, row 30714 written 2026-11-21T10:00:00.000Z (1 checkpoint checked: 1 matches the log)',
    );
    expect(formatCheckpoints({ checked: 2160, matched: 2040, pruned: 120, newestMatched: newest, problems: {}, headId: 30800 })).toBe(
      'checkpoints: the chain holds up to the newest checkpoint, row 30714 written 2026-11-21T10:00:00.000Z ' +
        '(2160 checkpoints checked: 2040 match the log, 120 name rows pruned by retention, older than audit.retention)',
    );
  });

  it('claims no row when every checkpoint names a pruned row', () => {
    expect(formatCheckpoints({ checked: 1, matched: 0, pruned: 1, problems: {}, headId: 9 })).toBe(
      'checkpoints: 1 checkpoint checked, naming a row pruned by retention (older than audit.retention): none names a row still in the log to hold the chain to',
    );
  });
});

describe('whereCheckpointsComeFrom', () => {
  it('names the daemon log and its interval, and the command that writes one with the options given', () => {
    expect(whereCheckpointsComeFrom({ enabled: true, checkpointEvery: '1h' }, 'cp.txt', { config: '/etc/switchboard/config.yaml' })).toBe(
      'Checkpoints come from the daemon: it logs one every audit.checkpointEvery (1h) while calls are recorded, at log.level info, ' +
        "as 'audit: checkpoint switchboard-audit-checkpoint v1 ...' in its log; give that log (or the file your log shipper keeps) to --checkpoint. " +
        'Or write one now: switchboard audit checkpoint --config /etc/switchboard/config.yaml >> cp.txt',
    );
  });

  it('says the daemon logs none when checkpointEvery is off, and quotes a path the shell would split', () => {
    expect(whereCheckpointsComeFrom({ enabled: true, checkpointEvery: 'off' }, 'my checkpoints.txt', { 'data-dir': "/srv/bob's data" })).toBe(
      'audit.checkpointEvery is off in this config, so the daemon logs none. ' +
        "Write one with: switchboard audit checkpoint --data-dir '/srv/bob'\\''s data' >> 'my checkpoints.txt'",
    );
  });

  it('says the daemon logs none when the audit log is disabled, whatever checkpointEvery says', () => {
    for (const checkpointEvery of ['1h', 'off']) {
      expect(whereCheckpointsComeFrom({ enabled: false, checkpointEvery }, 'cp.txt', {})).toBe(
        'The audit log is disabled in this config (audit.enabled: false), so the daemon records no calls and logs no checkpoints. ' +
          'For the rows recorded before, write one with: switchboard audit checkpoint >> cp.txt',
      );
    }
  });
});
