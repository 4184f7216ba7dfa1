import { durationWords } from '@switchboard/core';
import { describe, expect, it } from 'vitest';

/**
 * The inbox page's script runs in the browser, which cannot import libs/core: it words a
 * duration itself (the approval's "Remember for ..." choices), and must word it as the
 * host's approval form does (durationWords), or one approver reads two answers.
 */
// A path, not a literal specifier: the page's modules are plain JavaScript without types.
const DOM_JS = new URL('./page/dom.js', import.meta.url).href;
const { formatDuration } = (await import(DOM_JS)) as { formatDuration(ms: number): string };

describe("the inbox page's durations", () => {
  it.each([
    [1000, '1 second'],
    [90_000, '90 seconds'],
    [900_000, '15 minutes'],
    [3_600_000, '1 hour'],
    [28_800_000, '8 hours'],
    // Rounded to whole seconds these were "3 seconds" and "1 seconds".
    [2500, '2.5 seconds'],
    [1400, '1.4 seconds'],
    [250, '250 milliseconds'],
  ])('%d ms is "%s"', (ms, text) => expect(formatDuration(ms)).toBe(text));

  it('words every duration as durationWords does', () => {
    const samples = [0, 1, 2, 999, 999.5, 1000, 1001, 1099, 1100, 1999, 2000, 59_999, 60_000, 60_001, 61_000, 3_599_999, 3_600_000, 86_400_000, 86_400_001, 2_147_483_000];
    for (const ms of samples) expect([ms, formatDuration(ms)]).toEqual([ms, durationWords(ms)]);
  });
});
