import { silentLogger } from '@switchboard/observability';
import { describe, expect, it, vi } from 'vitest';
import { setup } from '../test-support/catalog-sync-setup.js';

// What callers of CatalogSync wait for: initialize's warm-up, and an upstream just back being read.

describe('CatalogSync: warm (what initialize waits for)', () => {
  it('waits for a list_changed read that supersedes the full read, so the first lists are complete', async () => {
    const t = setup();
    let warmed = false;
    void t.sync.warm(60_000).then(() => (warmed = true));
    t.emit().stateChanged!('up', 'ready', 'connecting');
    // The upstream registers more tools once initialized, and says so at once.
    t.emit().notification!('up', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    t.answer('tools/list', [{ name: 'early' }]);
    t.answer('prompts/list', []);
    t.answer('resources/list', []);
    t.answer('resources/templates/list', []);
    await t.settle();
    expect(warmed).toBe(false);
    t.answer('tools/list', [{ name: 'early' }, { name: 'late' }]);
    await t.settle();
    expect(warmed).toBe(true);
    expect(t.names('tools')).toEqual(['up__early', 'up__late']);
  });

  it('does not wait for an upstream whose first connect failed', async () => {
    const t = setup();
    let warmed = false;
    void t.sync.warm(60_000).then(() => (warmed = true));
    t.emit().stateChanged!('up', 'down', 'connecting');
    await t.settle();
    expect(warmed).toBe(true);
  });

  it('logs the upstreams it stopped waiting for when the wait runs out, and nothing when they settle', async () => {
    vi.useFakeTimers();
    try {
      const logger = silentLogger();
      const info = vi.spyOn(logger, 'info');
      const t = setup(logger);
      const warmed = t.sync.warm(5_000);
      await vi.advanceTimersByTimeAsync(5_000);
      await warmed;
      expect(info).toHaveBeenCalledWith({ upstreams: ['up'] }, expect.stringMatching(/stopped waiting for upstreams still on their first connect/));

      const settled = setup(logger);
      info.mockClear();
      const answered = settled.sync.warm(5_000);
      settled.emit().stateChanged!('up', 'down', 'connecting');
      await vi.advanceTimersByTimeAsync(5_000);
      await answered;
      expect(info).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  it('tells the catalog to keep what names mean once the first reads have ended, not before', async () => {
    const t = setup();
    const keepMeanings = vi.spyOn(t.store, 'keepMeanings');
    t.emit().stateChanged!('up', 'ready', 'connecting');
    t.answer('tools/list', [{ name: 'x' }]);
    t.answer('prompts/list', []);
    t.answer('resources/list', []);
    await t.settle();
    expect(keepMeanings).not.toHaveBeenCalled();
    t.answer('resources/templates/list', []);
    await t.settle();
    expect(keepMeanings).toHaveBeenCalled();
  });

  it('tells the catalog to keep what names mean when a host is let in before the first reads end', async () => {
    vi.useFakeTimers();
    try {
      const t = setup();
      const keepMeanings = vi.spyOn(t.store, 'keepMeanings');
      const warmed = t.sync.warm(5_000);
      expect(keepMeanings).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(5_000);
      await warmed;
      expect(keepMeanings).toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('CatalogSync.listsRead: waiting for an upstream just back to be read', () => {
  it('resolves at once with no read under way, once every read of the upstream has ended, or after maxMs', async () => {
    const t = setup();
    let done = false;
    await t.sync.listsRead('up', 60_000);
    t.emit().stateChanged!('up', 'ready', 'connecting');
    void t.sync.listsRead('up', 60_000).then(() => (done = true));
    t.answer('tools/list', [{ name: 'echo' }]);
    t.answer('prompts/list', []);
    t.answer('resources/list', []);
    await t.settle();
    expect(done).toBe(false); // the templates are still being read
    t.answer('resources/templates/list', []);
    await t.settle();
    expect(done).toBe(true);
    expect(t.names('tools')).toEqual(['up__echo']); // read by the time it resolves

    vi.useFakeTimers();
    try {
      t.emit().notification!('up', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      let gaveUp = false;
      void t.sync.listsRead('up', 1000).then(() => (gaveUp = true));
      await vi.advanceTimersByTimeAsync(999);
      expect(gaveUp).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(gaveUp).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
