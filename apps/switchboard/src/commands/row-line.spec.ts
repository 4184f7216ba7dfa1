import type { AuditRow } from '@switchboard/audit';
import { describe, expect, it } from 'vitest';
import { fieldText, formatRowLine } from './row-line.js';

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

  it('keeps a row on one line, its control characters escaped visibly in a quoted value', () => {
    const line = formatRowLine(row({ name: 'evil\u001b[2J\ntool', principal: 'a\u202eb' }));
    expect(line).not.toMatch(/[\u0000-\u001f\u202e]/);
    expect(line).toContain('  "evil\\u001b[2J\\ntool"  ');
    expect(line).toContain('  "a\\u202eb"  tools/call  ');
  });

  it('lets no value forge a row or a column: a newline and runs of spaces in a tool name are escaped, so the fields stay where they are', () => {
    const forged = 'fx__echo  fx  1ms  {}\n2025-01-01T09:30:00.000Z  allowed  dev#1  ok  admin  tools/call  fx__wipe';
    const line = formatRowLine(row({ name: forged, upstream: null }));
    expect(line.split('\n')).toHaveLength(1);
    const fields = line.split('  ');
    expect(fields).toHaveLength(10);
    expect(fields[6]).toBe(
      '"fx__echo\\u0020\\u0020fx\\u0020\\u00201ms\\u0020\\u0020{}\\n2025-01-01T09:30:00.000Z\\u0020\\u0020allowed\\u0020\\u0020dev#1\\u0020\\u0020ok\\u0020\\u0020admin\\u0020\\u0020tools/call\\u0020\\u0020fx__wipe"',
    );
    expect(fields[7]).toBe('-');
  });

  it('quotes a value that could be misread, and only such a value: single spaces between words stay as they are', () => {
    const shown = (name: string) => formatRowLine(row({ name })).split('  ')[6];
    expect(shown('POST /mcp')).toBe('POST /mcp');
    expect(shown('say "hi"')).toBe('say "hi"');
    expect(shown(' lead')).toBe('"\\u0020lead"');
    expect(shown('trail ')).toBe('"trail\\u0020"');
    expect(shown('tab\there')).toBe('"tab\\there"');
    expect(shown('em\u2003space')).toBe('"em\\u2003space"');
    expect(shown('"quoted"')).toBe('"\\"quoted\\""');
    expect(shown('back\\slash\n')).toBe('"back\\\\slash\\n"');
    // Not to be taken for the dash of a missing value, nor for no field at all.
    expect(shown('-')).toBe('"-"');
    expect(shown('')).toBe('""');
  });
});

describe('fieldText', () => {
  it('leaves ordinary text, including non-ASCII and single spaces, alone', () => {
    expect(fieldText('héllo wörld ✓')).toBe('héllo wörld ✓');
  });
});
