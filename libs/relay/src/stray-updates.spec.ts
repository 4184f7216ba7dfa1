import { describe, expect, it } from 'vitest';
import {
  MAX_STRAY_URI_CHARS,
  MAX_STRAY_URIS,
  MAX_STRAY_URIS_PER_CONNECTION,
  STRAY_UNSUBSCRIBE_INTERVAL_MS,
  STRAY_URIS_OWN_SHARE,
  StrayUpdates,
} from './stray-updates.js';

describe('StrayUpdates', () => {
  it('admits a URI once per interval', () => {
    const strays = new StrayUpdates();
    expect(strays.admit('c', 'a://x', 0)).toBe(true);
    expect(strays.admit('c', 'a://x', STRAY_UNSUBSCRIBE_INTERVAL_MS - 1)).toBe(false);
    expect(strays.admit('c', 'a://x', STRAY_UNSUBSCRIBE_INTERVAL_MS)).toBe(true);
  });

  it('tracks a URI per connection: the same URI on another connection is admitted too', () => {
    const strays = new StrayUpdates();
    expect(strays.admit('a', 'a://x', 0)).toBe(true);
    expect(strays.admit('b', 'a://x', 0)).toBe(true);
  });

  it('tracks at most MAX_STRAY_URIS_PER_CONNECTION of a connection at a time, warning once, and admits again as their intervals end', () => {
    const warned: [string | undefined, number][] = [];
    const strays = new StrayUpdates((connection, limit) => warned.push([connection, limit]));
    for (let i = 0; i < MAX_STRAY_URIS_PER_CONNECTION; i++) expect(strays.admit('a', `a://${i}`, i)).toBe(true);
    expect(strays.admit('a', 'a://new', MAX_STRAY_URIS_PER_CONNECTION)).toBe(false);
    expect(strays.admit('a', 'a://other', MAX_STRAY_URIS_PER_CONNECTION)).toBe(false);
    expect(warned).toEqual([['a', MAX_STRAY_URIS_PER_CONNECTION]]);
    // The first one's interval is over: room for one more.
    expect(strays.admit('a', 'a://new', STRAY_UNSUBSCRIBE_INTERVAL_MS)).toBe(true);
    expect(strays.admit('a', 'a://other', STRAY_UNSUBSCRIBE_INTERVAL_MS)).toBe(false);
    expect(warned).toHaveLength(2);
  });

  it("one connection flooding the gateway with stray URIs leaves another's admitted", () => {
    const strays = new StrayUpdates();
    for (let i = 0; i < 2 * MAX_STRAY_URIS_PER_CONNECTION; i++) strays.admit('flooding', `a://${i}`, 0);
    expect(strays.admit('b', 'b://stray', 1)).toBe(true);
  });

  it('tracks at most MAX_STRAY_URIS over every connection past their own shares, warning once', () => {
    const warned: [string | undefined, number][] = [];
    const strays = new StrayUpdates((connection, limit) => warned.push([connection, limit]));
    const pastShare = MAX_STRAY_URIS_PER_CONNECTION - STRAY_URIS_OWN_SHARE;
    // More connections at their own limit than the ceiling has room for past their shares.
    const connections = Math.ceil(MAX_STRAY_URIS / pastShare) + 2;
    let admitted = 0;
    for (let c = 0; c < connections; c++) {
      for (let i = 0; i < MAX_STRAY_URIS_PER_CONNECTION; i++) if (strays.admit(`c${c}`, `a://${i}`, 0)) admitted += 1;
    }
    expect(admitted).toBe(MAX_STRAY_URIS + connections * STRAY_URIS_OWN_SHARE);
    expect(warned).toEqual([[undefined, MAX_STRAY_URIS]]);
    // A connection past its own share waits for room over all.
    for (let i = 0; i < STRAY_URIS_OWN_SHARE; i++) expect(strays.admit('late', `a://${i}`, 1)).toBe(true);
    expect(strays.admit('late', 'a://x', 1)).toBe(false);
    expect(strays.admit('late', 'a://x', STRAY_UNSUBSCRIBE_INTERVAL_MS)).toBe(true);
  });

  it("many connections flooding at their own limit, minute after minute, leave a quiet one's strays admitted", () => {
    const strays = new StrayUpdates();
    const flooding = 40;
    for (let minute = 0; minute < 3; minute++) {
      const now = minute * STRAY_UNSUBSCRIBE_INTERVAL_MS;
      for (let c = 0; c < flooding; c++) {
        for (let i = 0; i < 2 * MAX_STRAY_URIS_PER_CONNECTION; i++) strays.admit(`session-${c}`, `a://${minute}/${i}`, now);
      }
      // The quiet upstream's one real stray, then another a while later, in every minute.
      expect(strays.admit('quiet', `q://stray/${minute}`, now + 1)).toBe(true);
      expect(strays.admit('quiet', `q://other/${minute}`, now + 30_000)).toBe(true);
    }
  });
  it('leaves alone a URI longer than MAX_STRAY_URI_CHARS', () => {
    const uri = `a://${'x'.repeat(MAX_STRAY_URI_CHARS)}`;
    expect(new StrayUpdates().admit('c', uri, 0)).toBe(false);
  });
});
