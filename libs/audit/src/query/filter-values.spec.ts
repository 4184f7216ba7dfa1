import type { AuditRow } from '@switchboard/audit';
import { describe, expect, it } from 'vitest';
import { auditRowJson, isAuditDecision, parseIsoInstant } from './filter-values.js';

describe('parseIsoInstant', () => {
  it.each([
    ['2025-06-01', Date.UTC(2025, 5, 1)],
    ['2025-06-01T12:30:00Z', Date.UTC(2025, 5, 1, 12, 30)],
    ['2025-06-01T12:30:00.250Z', Date.UTC(2025, 5, 1, 12, 30, 0, 250)],
    ['2025-06-01T12:30:00+02:00', Date.UTC(2025, 5, 1, 10, 30)],
    ['2024-02-29', Date.UTC(2024, 1, 29)],
  ])('reads %s', (text, expected) => {
    expect(parseIsoInstant(text)).toBe(expected);
  });

  it('reads a date-time without an offset as local time', () => {
    expect(parseIsoInstant('2025-06-01T12:30')).toBe(new Date(2025, 5, 1, 12, 30).getTime());
  });

  it.each(['2025-02-30', '2025-02-29', '2025-13-01', '2025-06-01T25:00Z', 'June 1, 2025', '1750000000000', '2025-6-1', ''])(
    'refuses %j',
    (text) => {
      expect(parseIsoInstant(text)).toBeUndefined();
    },
  );
});

describe('isAuditDecision', () => {
  it('knows the five decisions and nothing else', () => {
    expect(['allowed', 'denied', 'limited', 'unauthenticated', 'refused'].every(isAuditDecision)).toBe(true);
    expect(isAuditDecision('ALLOWED')).toBe(false);
  });
});

describe('auditRowJson', () => {
  it('adds the ISO time next to the id and keeps every field', () => {
    const row = { id: 7, at: Date.UTC(2025, 0, 2, 3, 4, 5), principal: 'p' } as AuditRow;
    const json = auditRowJson(row);
    expect(Object.keys(json).slice(0, 2)).toEqual(['id', 'time']);
    expect(json).toEqual({ ...row, time: '2025-01-02T03:04:05.000Z' });
  });
});
