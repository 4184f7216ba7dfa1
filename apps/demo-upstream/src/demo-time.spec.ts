import { describe, expect, it } from 'vitest';
import { isoTime } from './demo-time.js';

describe('isoTime', () => {
  const instant = new Date('2025-03-01T12:04:05.006Z');

  it('gives the UTC form without a zone', () => {
    expect(isoTime(instant)).toBe('2025-03-01T12:04:05.006Z');
  });

  it('gives the wall clock and offset of an IANA zone', () => {
    expect(isoTime(instant, 'Europe/Paris')).toBe('2025-03-01T13:04:05.006+01:00');
    expect(isoTime(instant, 'Asia/Kolkata')).toBe('2025-03-01T17:34:05.006+05:30');
    expect(isoTime(instant, 'America/New_York')).toBe('2025-03-01T07:04:05.006-05:00');
    expect(isoTime(instant, 'Etc/UTC')).toBe('2025-03-01T12:04:05.006+00:00');
  });

  it('follows daylight saving time', () => {
    expect(isoTime(new Date('2025-07-01T12:00:00.000Z'), 'Europe/Paris')).toBe('2025-07-01T14:00:00.000+02:00');
  });

  it('names an unknown zone in its error', () => {
    expect(() => isoTime(instant, 'Mars/Olympus')).toThrow('Unknown time zone "Mars/Olympus"');
  });
});
