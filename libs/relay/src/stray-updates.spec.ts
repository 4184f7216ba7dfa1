import { describe, expect, it } from 'vitest';
import { MAX_STRAY_URI_CHARS, MAX_STRAY_URIS, STRAY_UNSUBSCRIBE_INTERVAL_MS, StrayUpdates } from './stray-updates.js';

describe('StrayUpdates', () => {
  it('admits a URI once per interval', () => {
    const strays = new StrayUpdates();
    expect(strays.admit('k', 'a://x', 0)).toBe(true);
    expect(strays.admit('k', 'a://x', STRAY_UNSUBSCRIBE_INTERVAL_MS - 1)).toBe(false);
    expect(strays.admit('k', 'a://x', STRAY_UNSUBSCRIBE_INTERVAL_MS)).toBe(true);
  });

  it('tracks at most MAX_STRAY_URIS at a time, warning once, and admits again as their intervals end', () => {
    const warned: number[] = [];
    const strays = new StrayUpdates((count) => warned.push(count));
    for (let i = 0; i < MAX_STRAY_URIS; i++) expect(strays.admit(`k${i}`, `a://${i}`, i)).toBe(true);
    expect(strays.admit('new', 'a://new', MAX_STRAY_URIS)).toBe(false);
    expect(strays.admit('other', 'a://other', MAX_STRAY_URIS)).toBe(false);
    expect(warned).toEqual([MAX_STRAY_URIS]);
    // The first one's interval is over: room for one more.
    expect(strays.admit('new', 'a://new', STRAY_UNSUBSCRIBE_INTERVAL_MS)).toBe(true);
    expect(strays.admit('other', 'a://other', STRAY_UNSUBSCRIBE_INTERVAL_MS)).toBe(false);
  });

  it('leaves alone a URI longer than MAX_STRAY_URI_CHARS', () => {
    const uri = `a://${'x'.repeat(MAX_STRAY_URI_CHARS)}`;
    expect(new StrayUpdates().admit(uri, uri, 0)).toBe(false);
  });
});
