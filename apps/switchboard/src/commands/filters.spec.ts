import { describe, expect, it } from 'vitest';
import { CommandError } from './command-error.js';
import { parseFilters, parseWhen } from './filters.js';

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);

function failure(run: () => unknown): CommandError {
  try {
    run();
  } catch (err) {
    if (err instanceof CommandError) return err;
    throw err;
  }
  throw new Error('expected a CommandError');
}

describe('parseWhen', () => {
  it.each([
    ['30s', NOW - 30_000],
    ['30m', NOW - 30 * 60_000],
    ['24h', NOW - 24 * 3_600_000],
    ['7d', NOW - 7 * 86_400_000],
    ['2w', NOW - 14 * 86_400_000],
    ['2025-06-01', Date.UTC(2025, 5, 1)],
    ['2025-06-01T08:00:00Z', Date.UTC(2025, 5, 1, 8)],
    // Epoch milliseconds, a row's `at` as export and the admin API show it.
    ['1795973170337', 1_795_973_170_337],
  ])('%s', (text, expected) => {
    expect(parseWhen(text, NOW)).toBe(expected);
  });

  it.each(['yesterday', '7', '1700000000', 'd7', '7days', '-7d', '1.5h', '2025-02-30', ''])('refuses %j', (text) => {
    expect(parseWhen(text, NOW)).toBeUndefined();
  });
});

describe('parseFilters', () => {
  it('turns every option into the AuditFilter field', () => {
    expect(
      parseFilters(
        {
          since: '24h',
          until: '2025-06-15T11:00:00Z',
          principal: 'alice',
          tool: 'fx__echo',
          decision: 'limited',
          method: 'tools/call',
          upstream: 'fx',
          session: 'abc',
          'after-id': '42',
        },
        NOW,
      ),
    ).toEqual({
      since: NOW - 86_400_000,
      until: Date.UTC(2025, 5, 15, 11),
      principal: 'alice',
      tool: 'fx__echo',
      decision: 'limited',
      method: 'tools/call',
      upstream: 'fx',
      sessionId: 'abc',
      afterId: 42,
    });
  });

  it('no options, no filter', () => {
    expect(parseFilters({}, NOW)).toEqual({});
  });

  it('reports every bad value in one usage error (exit 2)', () => {
    const err = failure(() => parseFilters({ since: 'last week', until: 'soon', decision: 'ok', tool: '' }, NOW));
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain("--since 'last week'");
    expect(err.message).toContain("--until 'soon'");
    expect(err.message).toContain("--decision 'ok': expected one of allowed, denied, limited, unauthenticated, refused");
    expect(err.message).toContain('--tool must not be empty');
  });

  it("says which decision a policy's word or a misspelling means: rows are allowed or denied, not allow or deny", () => {
    expect(failure(() => parseFilters({ decision: 'deny' }, NOW)).message).toContain(
      "--decision 'deny': expected one of allowed, denied, limited, unauthenticated, refused (did you mean denied?)",
    );
    expect(failure(() => parseFilters({ decision: 'allow' }, NOW)).message).toContain('(did you mean allowed?)');
    expect(failure(() => parseFilters({ decision: 'Limited' }, NOW)).message).toContain('(did you mean limited?)');
    expect(failure(() => parseFilters({ decision: 'refsued' }, NOW)).message).toContain('(did you mean refused?)');
    expect(failure(() => parseFilters({ decision: 'ok' }, NOW)).message).not.toContain('did you mean');
  });

  it('takes --after-id 0 (every row) and refuses an --after-id that is no row id', () => {
    expect(parseFilters({ 'after-id': '0' }, NOW)).toEqual({ afterId: 0 });
    for (const bad of ['-1', '1.5', '1e3', 'last', '', '1234567890123456']) {
      expect(failure(() => parseFilters({ 'after-id': bad }, NOW)).message).toBe(
        `--after-id '${bad}': expected a row id, a whole number from 0 (the id of the last row you have)`,
      );
    }
  });

  it('refuses a window that ends before it starts', () => {
    expect(failure(() => parseFilters({ since: '1h', until: '2h' }, NOW)).message).toMatch(/--since must be earlier than --until/);
  });
});
