import { describe, expect, it } from 'vitest';
import { durationText, durationWords } from './duration-text.js';

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
    [59_901, '1 min'],
    [60_000, '1 min'],
    [60_001, '1 min 1 s'],
    [90_000, '1 min 30 s'],
    [3_599_001, '1 h'],
    [3_600_000, '1 h'],
    [3_600_001, '1 h 1 min'],
    [86_460_000, '24 h 1 min'],
    [172_740_000, '47 h 59 min'],
    [172_800_000, '2 d'],
    [172_800_001, '2 d 1 h'],
    [31_536_000_000, '365 d'],
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

  it('past a minute, rounds up to the second, and past an hour to the minute', () => {
    const said = (text: string) =>
      [...text.matchAll(/(\d+) (h|min|s)/g)].reduce((sum, [, n, unit]) => sum + Number(n) * { h: 3_600_000, min: 60_000, s: 1000 }[unit as 'h' | 'min' | 's'], 0);
    for (let ms = 59_000; ms <= 7_300_000; ms += 997) {
      const text = durationText(ms);
      expect(said(text)).toBeGreaterThanOrEqual(ms);
      expect(said(text) - ms).toBeLessThan(ms < 3_600_000 ? 1000 : 60_000);
    }
  });

  it('from two days on, says days and rounds up to the hour: a year-long token read "8760 h away"', () => {
    for (let ms = 172_800_000; ms <= 40 * 86_400_000; ms += 3_599_999) {
      const [, days, hours] = /^(\d+) d(?: (\d+) h)?$/.exec(durationText(ms)) ?? [];
      const said = Number(days) * 86_400_000 + Number(hours ?? 0) * 3_600_000;
      expect(said).toBeGreaterThanOrEqual(ms);
      expect(said - ms).toBeLessThan(3_600_000);
    }
  });

  it('says zero as it is, and refuses what is no duration', () => {
    expect(durationText(0)).toBe('0 ms');
    for (const ms of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => durationText(ms)).toThrow(RangeError);
  });
});

describe('durationWords', () => {
  it.each([
    [1000, '1 second'],
    [2000, '2 seconds'],
    [90_000, '90 seconds'],
    [60_000, '1 minute'],
    [120_000, '2 minutes'],
    [900_000, '15 minutes'],
    [3_600_000, '1 hour'],
    [5_400_000, '90 minutes'],
    [28_800_000, '8 hours'],
    [86_400_000, '1 day'],
    [172_800_000, '2 days'],
  ])('%d ms is "%s": the largest unit that says it exactly', (ms, text) => expect(durationWords(ms)).toBe(text));

  it.each([
    // Rounded to whole seconds these were "3 seconds", "1 seconds", "0 seconds".
    [2500, '2.5 seconds'],
    [1400, '1.4 seconds'],
    [1001, '1.1 seconds'],
    [60_050, '60.1 seconds'],
    [1, '1 millisecond'],
    [250, '250 milliseconds'],
    [499, '499 milliseconds'],
    [999.5, '1 second'],
    [0, '0 milliseconds'],
  ])('%d ms is "%s": otherwise rounded up as durationText, in words', (ms, text) => expect(durationWords(ms)).toBe(text));

  it('says what durationText says, spelt out, whenever no larger unit fits', () => {
    const spelt = (text: string) => text.replace(/ ms$/, ' milliseconds').replace(/ s$/, ' seconds').replace(/^1 (\w+)s$/, '1 $1');
    for (let ms = 0; ms <= 3000; ms += 7) expect(durationWords(ms)).toBe(spelt(durationText(ms)));
  });

  it('refuses what is no duration', () => {
    for (const ms of [-1, Number.NaN, Number.NEGATIVE_INFINITY]) expect(() => durationWords(ms)).toThrow(RangeError);
  });
});
