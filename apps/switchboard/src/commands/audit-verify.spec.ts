import { describe, expect, it } from 'vitest';
import { formatPruning } from './audit-verify.js';

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
