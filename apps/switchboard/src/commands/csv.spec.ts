import type { AuditRow } from '@switchboard/audit';
import { describe, expect, it } from 'vitest';
import { CSV_COLUMNS, csvField, csvHeader, csvRow } from './csv.js';

describe('csvField', () => {
  it('leaves plain text, numbers and booleans alone; null is empty', () => {
    expect(csvField('alice')).toBe('alice');
    expect(csvField(-32601)).toBe('-32601');
    expect(csvField(12.5)).toBe('12.5');
    expect(csvField(false)).toBe('false');
    expect(csvField(null)).toBe('');
    expect(csvField('')).toBe('');
  });

  it('quotes a field holding a comma, quote, CR or LF, doubling the quotes (RFC 4180)', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line1\nline2')).toBe('"line1\nline2"');
    expect(csvField('a\rb')).toBe('"a\rb"');
    expect(csvField('{"text":"x"}')).toBe('"{""text"":""x""}"');
  });

  it.each(['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '=HYPERLINK("http://evil.example")'])(
    'neutralises the formula %j with a leading quote',
    (text) => {
      expect(csvField(text).replace(/^"/, '').startsWith("'")).toBe(true);
    },
  );

  it('quotes a neutralised field that also needs quoting', () => {
    expect(csvField('=a,b')).toBe(`"'=a,b"`);
    expect(csvField('\rx')).toBe(`"'\rx"`);
  });
});

describe('csvRow', () => {
  it('writes every column in header order with CRLF line ends', () => {
    const row = {
      id: 3,
      at: Date.UTC(2025, 0, 1),
      principal: 'alice',
      method: 'tools/call',
      arguments: '{"q":"a,b"}',
      argumentsTruncated: false,
      errorCode: null,
    } as unknown as AuditRow;
    const header = csvHeader();
    const line = csvRow(row);
    expect(header.endsWith('\r\n')).toBe(true);
    expect(header.slice(0, -2).split(',')).toEqual([...CSV_COLUMNS]);
    expect(line.startsWith('3,2025-01-01T00:00:00.000Z,1735689600000,alice,')).toBe(true);
    expect(line).toContain(',tools/call,');
    expect(line).toContain(',"{""q"":""a,b""}",false,');
    expect(line.endsWith('\r\n')).toBe(true);
  });
});
