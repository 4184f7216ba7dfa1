import { describe, expect, it } from 'vitest';
import {
  MAX_STRAY_URI_CHARS,
  MAX_STRAY_URIS,
  MAX_STRAY_URIS_PER_CONNECTION,
  STRAY_UNSUBSCRIBE_INTERVAL_MS,
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

  it('tracks at most MAX_STRAY_URIS over every connection, warning once', () => {
    const warned: [string | undefined, number][] = [];
    const strays = new StrayUpdates((connection, limit) => warned.push([connection, limit]));
    const connections = MAX_STRAY_URIS / MAX_STRAY_URIS_PER_CONNECTION;
    for (let c = 0; c < connections; c++) {
      for (let i = 0; i < MAX_STRAY_URIS_PER_CONNECTION; i++) expect(strays.admit(`c${c}`, `a://${i}`, 0)).toBe(true);
    }
    expect(strays.admit('late', 'a://x', 1)).toBe(false);
    expect(strays.admit('later', 'a://x', 1)).toBe(false);
    expect(warned).toEqual([[undefined, MAX_STRAY_URIS]]);
    expect(strays.admit('late', 'a://x', STRAY_UNSUBSCRIBE_INTERVAL_MS)).toBe(true);
  });

  it('leaves alone a URI longer than MAX_STRAY_URI_CHARS', () => {
    const uri = `a://${'x'.repeat(MAX_STRAY_URI_CHARS)}`;
    expect(new StrayUpdates().admit('c', uri, 0)).toBe(false);
  });
});
