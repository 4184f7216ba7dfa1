import { describe, expect, it } from 'vitest';
import { durationText } from './duration-text.js';

describe('durationText', () => {
  it.each([
    [1, '1 ms'],
    [250, '250 ms'],
    [999, '999 ms'],
    [1000, '1 s'],
    [1001, '1.1 s'],
    [1250, '1.3 s'],
    [1300, '1.3 s'],
    [1301, '1.4 s'],
    [41_230, '41.3 s'],
    [60_000, '60 s'],
    [86_460_000, '86460 s'],
  ])('%d ms is "%s"', (ms, text) => expect(durationText(ms)).toBe(text));

  it('rounds a fraction of a millisecond up, into seconds when it reaches one', () => {
    expect(durationText(0.2)).toBe('1 ms');
    expect(durationText(249.5)).toBe('250 ms');
    expect(durationText(999.01)).toBe('1 s');
    expect(durationText(1000.5)).toBe('1.1 s');
  });

  it('is never shorter than the wait, and never a tenth of a second longer', () => {
    for (let ms = 1; ms <= 5000; ms++) {
      const [count, unit] = durationText(ms).split(' ');
      const said = Number(count) * (unit === 's' ? 1000 : 1);
      expect(said).toBeGreaterThanOrEqual(ms);
      expect(said - ms).toBeLessThan(unit === 's' ? 100 : 1);
    }
  });

  it('says zero as it is, and refuses what is no duration', () => {
    expect(durationText(0)).toBe('0 ms');
    for (const ms of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => durationText(ms)).toThrow(RangeError);
  });
});
