import type { AuditStats } from '@switchboard/audit';
import { describe, expect, it } from 'vitest';
import { formatStats } from './audit-stats.js';

const stats: AuditStats = {
  rows: 11,
  byDecision: { allowed: 5, denied: 1, limited: 1, unauthenticated: 2, refused: 2 },
  calls: 5,
  errors: 1,
  cancelled: 1,
  denials: 2,
  byTool: [
    { tool: 'probe__echo', upstream: 'probe', calls: 4, errors: 1, denials: 1 },
    { tool: 'probe__nope', upstream: null, calls: 1, errors: 0, denials: 1 },
    { tool: null, upstream: null, calls: 1, errors: 0, denials: 1 },
  ],
  byPrincipal: [{ principal: 'anonymous', calls: 5, errors: 1, denials: 2 }],
  byMethod: [
    { method: 'tools/call', rows: 5, errors: 1, denials: 2 },
    { method: 'http', rows: 4, errors: 0, denials: 4 },
    { method: 'prompts/get', rows: 1, errors: 0, denials: 0 },
    { method: 'resources/read', rows: 1, errors: 1, denials: 0 },
  ],
};

describe('formatStats', () => {
  it('says what each line counts: every row by decision, then tool calls per tool, per principal, and every row per method', () => {
    expect(formatStats(stats)).toBe(
      [
        '11 rows: 5 allowed, 1 denied, 1 limited, 2 unauthenticated, 2 refused',
        '5 tool calls (tools/call rows): 1 error, 1 cancelled, 2 denials (not let through: denied, limited, unauthenticated or refused)',
        '',
        'TOOL         UPSTREAM  CALLS  ERRORS  DENIALS',
        'probe__echo  probe         4       1        1',
        'probe__nope  -             1       0        1',
        '(no name)    -             1       0        1',
        '',
        'PRINCIPAL  CALLS  ERRORS  DENIALS',
        'anonymous      5       1        2',
        '',
        'METHOD          ROWS  ERRORS  DENIALS',
        'tools/call         5       1        2',
        'http               4       0        4',
        'prompts/get        1       0        0',
        'resources/read     1       1        0',
        '',
      ].join('\n'),
    );
  });

  it('says 1 row, 1 tool call, 1 error, 1 denial, and 0 or 2 of them in the plural', () => {
    const one = { ...stats, rows: 1, calls: 1, errors: 1, denials: 1, byTool: [], byPrincipal: [], byMethod: [] };
    expect(formatStats(one).split('\n').slice(0, 2)).toEqual([
      '1 row: 5 allowed, 1 denied, 1 limited, 2 unauthenticated, 2 refused',
      '1 tool call (tools/call rows): 1 error, 1 cancelled, 1 denial (not let through: denied, limited, unauthenticated or refused)',
    ]);
    const none = { ...one, rows: 0, calls: 2, errors: 0, denials: 0 };
    expect(formatStats(none).split('\n')[1]).toBe('2 tool calls (tools/call rows): 0 errors, 1 cancelled, 0 denials (not let through: denied, limited, unauthenticated or refused)');
  });
});
