import type { AuditRow } from '@switchboard/audit';
import { describe, expect, it } from 'vitest';
import { formatRowLine, terminalSafe } from './row-line.js';

const row = (extra: Partial<AuditRow>): AuditRow =>
  ({
    id: 1,
    at: Date.UTC(2025, 0, 1, 9, 30),
    principal: 'alice',
    authMethod: 'api-key',
    method: 'tools/call',
    name: 'fx__echo',
    upstream: 'fx',
    decision: 'allowed',
    rule: null,
    outcome: 'ok',
    errorCode: null,
    latencyMs: 12.4,
    arguments: '{"text":"hi"}',
    ...extra,
  }) as AuditRow;

describe('formatRowLine', () => {
  it('shows time, decision, rule, outcome, principal, method, name, upstream, latency and arguments', () => {
    expect(formatRowLine(row({ rule: 'dev#1' }))).toBe(
      '2025-01-01T09:30:00.000Z  allowed  dev#1  ok  alice  tools/call  fx__echo  fx  12ms  {"text":"hi"}',
    );
  });

  it('shows the error code with the outcome, and dashes for what is missing', () => {
    const line = formatRowLine(row({ decision: 'denied', outcome: 'error', errorCode: -32602, name: null, upstream: null, latencyMs: null, arguments: null }));
    expect(line).toBe('2025-01-01T09:30:00.000Z  denied  -  error:-32602  alice  tools/call  -  -  -');
  });

  it('names the rule that decided, so a default deny, a policy rule and a revoked key can be told apart', () => {
    const denied = { decision: 'denied', outcome: 'error', errorCode: -32602 } as const;
    expect(formatRowLine(row({ ...denied, rule: 'policy:default-deny' }))).toContain('  denied  policy:default-deny  error:-32602  alice  ');
    expect(formatRowLine(row({ ...denied, rule: 'no-random' }))).toContain('  denied  no-random  error:-32602  alice  ');
    const unauthenticated = { decision: 'unauthenticated', principal: 'anonymous', authMethod: 'none', method: 'http POST /mcp', name: null, upstream: null } as const;
    expect(formatRowLine(row({ ...unauthenticated, rule: 'auth:missing' }))).toContain('  unauthenticated  auth:missing  ');
    expect(formatRowLine(row({ ...unauthenticated, rule: 'auth:revoked-key' }))).toContain('  unauthenticated  auth:revoked-key  ');
  });

  it('names the caller as stats and --principal do, so a token user is not taken for the key of the same name', () => {
    expect(formatRowLine(row({ authMethod: 'jwt' }))).toContain('  ok  jwt:alice  tools/call  ');
    expect(formatRowLine(row({ principal: 'anonymous', authMethod: 'loopback' }))).toContain('  ok  loopback:anonymous  tools/call  ');
    expect(formatRowLine(row({}))).toContain('  ok  alice  tools/call  ');
  });

  it('cuts the arguments to 80 characters', () => {
    const line = formatRowLine(row({ arguments: JSON.stringify({ text: 'x'.repeat(500) }) }));
    const args = line.slice(line.indexOf('{'));
    expect(args).toHaveLength(80);
    expect(args.endsWith('…')).toBe(true);
  });

  it('keeps a row on one line and strips terminal control sequences', () => {
    const line = formatRowLine(row({ name: 'evil\u001b[2J\ntool', principal: 'a\u202eb' }));
    expect(line).not.toMatch(/[\u0000-\u001f\u202e]/);
    expect(line).toContain('evil\uFFFD[2J tool');
  });
});

describe('terminalSafe', () => {
  it('leaves ordinary text, including non-ASCII, alone', () => {
    expect(terminalSafe('héllo wörld ✓')).toBe('héllo wörld ✓');
  });
});
