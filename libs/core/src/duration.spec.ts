import { describe, expect, it } from 'vitest';
import { DurationRefused, durationMs, durationPattern, durationProblem, type DurationSetting } from './duration.js';

const WITH_OFF: DurationSetting = { name: 'every', example: '1h', off: 'does nothing', zero: '(it would spin)', max: '7d' };
const WITHOUT_OFF: DurationSetting = { name: '--for', example: '30d' };

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const W = 7 * D;

describe('durationMs', () => {
  it.each([
    ['1s', S],
    ['30s', 30 * S],
    ['90m', 90 * M],
    ['12h', 12 * H],
    ['90d', 90 * D],
    ['2w', 2 * W],
    ['007m', 7 * M],
    ['999999w', 999_999 * W],
  ])('%s', (text, ms) => expect(durationMs(text, WITHOUT_OFF)).toBe(ms));

  it("reads 'off' as undefined where the setting has it, and refuses it where it does not", () => {
    expect(durationMs('off', WITH_OFF)).toBeUndefined();
    expect(() => durationMs('off', WITHOUT_OFF)).toThrow("--for 'off': must be a count and a unit (s, m, h, d, w) like '30d'");
  });

  it.each(['', '90', 'd', '1.5h', '-1h', '+1h', '1H', '1 h', ' 1h', '1h ', '1h\n', '1d12h', '1y', '1ms', 'OFF', 'never', '１h'])(
    'refuses %j: not a count of 1-6 digits and one unit',
    (text) => {
      expect(() => durationMs(text, WITH_OFF)).toThrow(new DurationRefused(WITH_OFF, text, "must be a count and a unit (s, m, h, d, w) like '1h', or 'off'"));
    },
  );

  it('refuses a count of more than 6 digits as too long, naming a larger unit rather than the form it has', () => {
    expect(durationProblem('1000000s', WITH_OFF)).toBe('has a count of more than 6 digits; write it in a larger unit (m, h, d, w)');
    expect(durationProblem('999999999d', WITHOUT_OFF)).toBe('has a count of more than 6 digits; write it in a larger unit (w)');
    expect(durationProblem('9999999w', WITHOUT_OFF)).toBe('has a count of more than 6 digits');
  });

  it('refuses zero in any unit, saying what off means where there is one', () => {
    for (const text of ['0s', '0m', '00h', '000000d', '0w']) {
      expect(durationProblem(text, WITH_OFF)).toBe("must be more than 0 (it would spin); 'off' does nothing");
      expect(durationProblem(text, WITHOUT_OFF)).toBe('must be more than 0');
    }
  });

  it("keeps to the setting's longest, inclusive, in any unit", () => {
    expect(durationMs('7d', WITH_OFF)).toBe(7 * D);
    expect(durationMs('1w', WITH_OFF)).toBe(W);
    expect(durationMs('604800s', WITH_OFF)).toBe(W);
    for (const text of ['604801s', '8d', '169h', '2w']) expect(durationProblem(text, WITH_OFF)).toBe('must be at most 7d');
  });

  it("keeps to the setting's shortest, inclusive, in any unit, and still says zero's own reason for zero", () => {
    const atLeastAnHour: DurationSetting = { ...WITH_OFF, min: { at: '1h', why: '(too eager)' } };
    expect(durationMs('1h', atLeastAnHour)).toBe(H);
    expect(durationMs('60m', atLeastAnHour)).toBe(H);
    expect(durationMs('3600s', atLeastAnHour)).toBe(H);
    for (const text of ['3599s', '59m', '30s', '1s']) expect(durationProblem(text, atLeastAnHour)).toBe('must be at least 1h (too eager)');
    expect(durationProblem('0h', atLeastAnHour)).toBe("must be more than 0 (it would spin); 'off' does nothing");
  });

  it('names the setting and the value in what it throws', () => {
    const refused = (() => {
      try {
        durationMs('0d', WITHOUT_OFF);
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(DurationRefused);
    expect(refused).toMatchObject({ message: "--for '0d': must be more than 0", problem: 'must be more than 0', text: '0d', setting: WITHOUT_OFF });
  });
});

describe('durationPattern', () => {
  it('matches exactly what durationMs reads, the shortest and longest aside', () => {
    const texts = ['off', '1s', '30m', '0d', '00m', '90', '1y', '8d', '1h ', ' off', 'off ', 'OFF', '1000000m', '999999w'];
    for (const setting of [WITH_OFF, WITHOUT_OFF]) {
      const unbounded = { ...setting, min: undefined, max: undefined };
      for (const text of texts) expect([text, durationPattern(setting).test(text)]).toEqual([text, durationProblem(text, unbounded) === undefined]);
    }
  });
});
