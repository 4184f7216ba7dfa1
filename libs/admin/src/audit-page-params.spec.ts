import { encodeCursor } from '@switchboard/audit';
import { describe, expect, it } from 'vitest';
import { parseAuditPageParams, type ParsedPageRequest } from './audit-page-params.js';

function problemsOf(parsed: ParsedPageRequest): Record<string, string> {
  if (parsed.ok) throw new Error('expected problems, got a valid request');
  return Object.fromEntries(parsed.problems.map((p) => [p.param, p.message]));
}

describe('parseAuditPageParams', () => {
  it('defaults to the newest 100 rows, unfiltered', () => {
    expect(parseAuditPageParams({})).toEqual({ ok: true, request: { filter: {}, limit: 100, cursor: undefined, order: 'desc' } });
  });

  it('maps every filter, taking ISO dates and epoch milliseconds for since/until', () => {
    const cursor = encodeCursor(
      42,
      { since: Date.UTC(2025, 5, 1), until: 1_750_000_000_000, principal: 'alice', tool: 'fx__echo', decision: 'denied', method: 'tools/call', upstream: 'fx', sessionId: 's-1' },
      'asc',
    );
    const parsed = parseAuditPageParams({
      since: '2025-06-01',
      until: '1750000000000',
      principal: 'alice',
      tool: 'fx__echo',
      decision: 'denied',
      method: 'tools/call',
      upstream: 'fx',
      session: 's-1',
      limit: '1000',
      cursor,
      order: 'asc',
    });
    expect(parsed).toEqual({
      ok: true,
      request: {
        filter: {
          since: Date.UTC(2025, 5, 1),
          until: 1_750_000_000_000,
          principal: 'alice',
          tool: 'fx__echo',
          decision: 'denied',
          method: 'tools/call',
          upstream: 'fx',
          sessionId: 's-1',
        },
        limit: 1000,
        cursor,
        order: 'asc',
      },
    });
  });

  it('lists every bad parameter at once', () => {
    const problems = problemsOf(
      parseAuditPageParams({ since: 'yesterday', until: '2025-02-30', decision: 'maybe', limit: '0', order: 'sideways', cursor: 'abc' }),
    );
    expect(Object.keys(problems).sort()).toEqual(['cursor', 'decision', 'limit', 'order', 'since', 'until']);
    expect(problems.decision).toMatch(/allowed, denied, limited, unauthenticated, refused/);
  });

  it("names the decision meant by a policy's word: decision=deny is denied", () => {
    expect(problemsOf(parseAuditPageParams({ decision: 'deny' })).decision).toBe(
      "must be one of allowed, denied, limited, unauthenticated, refused (did you mean 'denied'?)",
    );
    expect(problemsOf(parseAuditPageParams({ decision: 'maybe' })).decision).not.toMatch(/did you mean/);
  });

  it.each(['0', '1001', '-5', '2.5', '1e2', ' 10', 'ten'])('refuses limit=%j', (limit) => {
    expect(problemsOf(parseAuditPageParams({ limit }))).toHaveProperty('limit');
  });

  it('refuses unknown, repeated and empty parameters rather than ignoring them', () => {
    const problems = problemsOf(parseAuditPageParams({ princpal: 'alice', tool: ['a', 'b'], upstream: '' }));
    expect(problems.princpal).toMatch(/unknown parameter/);
    expect(problems.tool).toMatch(/once/);
    expect(problems.upstream).toMatch(/empty/);
  });

  it('refuses a time window that ends before it starts', () => {
    expect(problemsOf(parseAuditPageParams({ since: '2025-06-02', until: '2025-06-01' }))).toHaveProperty('until');
  });
});
