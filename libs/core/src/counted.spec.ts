import { describe, expect, it } from 'vitest';
import { counted, countedBe } from './counted.js';

describe('counted', () => {
  it('says 1 in the singular, any other count in the plural', () => {
    expect(counted(1, 'error')).toBe('1 error');
    expect(counted(2, 'error')).toBe('2 errors');
    expect(counted(0, 'row')).toBe('0 rows');
    expect(counted(1, 'tool call')).toBe('1 tool call');
    expect(counted(3, 'entry', 'entries')).toBe('3 entries');
  });
});

describe('countedBe', () => {
  it('adds the verb that agrees with the count', () => {
    expect(countedBe(1, 'row', 'past')).toBe('1 row was');
    expect(countedBe(0, 'row', 'past')).toBe('0 rows were');
    expect(countedBe(1, 'item', 'present')).toBe('1 item is');
    expect(countedBe(2, 'entry', 'present', 'entries')).toBe('2 entries are');
  });
});
