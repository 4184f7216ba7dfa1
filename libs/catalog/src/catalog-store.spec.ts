import { describe, expect, it, vi } from 'vitest';
import { CatalogStore } from './catalog-store.js';
import type { Item, UpstreamSnapshot } from './catalog.types.js';

function snap(server: string, parts: Partial<UpstreamSnapshot> = {}): UpstreamSnapshot {
  return { server, prefix: server, namespace: 'none', tools: [], prompts: [], resources: [], resourceTemplates: [], ...parts };
}

const tool = (name: string, description = `Tool ${name}`): Item => ({ name, description, inputSchema: { type: 'object' } });

describe('CatalogStore', () => {
  it('batch applies several mutations with one rebuild and one notification', () => {
    const store = new CatalogStore();
    store.setSnapshot(snap('a', { namespace: 'prefix', tools: [tool('echo')] }));
    store.setSnapshot(snap('b', { namespace: 'prefix', tools: [tool('echo')] }));
    const listener = vi.fn();
    store.onChange(listener);
    store.batch(() => {
      store.setSnapshot(snap('a', { namespace: 'auto', tools: [tool('echo')] }));
      store.setSnapshot(snap('b', { namespace: 'auto', tools: [tool('echo'), tool('only_b')] }));
      expect(listener).not.toHaveBeenCalled();
    });
    expect(listener).toHaveBeenCalledTimes(1);
    expect(store.current.items('tools').map((t) => t.name)).toEqual(['a__echo', 'b__echo', 'only_b']);
  });

  it('remembers the names of an upstream that went down until it is back or no longer configured', () => {
    const prompt = (name: string): Item => ({ name });
    const store = new CatalogStore();
    store.setOrder(['a', 'b']);
    store.setSnapshot(snap('a', { namespace: 'prefix', tools: [tool('echo')], prompts: [prompt('greet')] }));
    store.setSnapshot(snap('b', { namespace: 'prefix', tools: [tool('echo')] }));

    store.removeServer('a', { remember: true });
    expect(store.current.resolveTool('a__echo')).toBeUndefined();
    expect(store.departedTool('a__echo')).toEqual({ server: 'a', name: 'echo' });
    expect(store.departedPrompt('a__greet')).toEqual({ server: 'a', name: 'greet' });
    expect(store.departedTool('b__echo')).toBeUndefined(); // still served
    expect(store.departedTool('nope')).toBeUndefined();

    store.setSnapshot(snap('a', { namespace: 'prefix', tools: [] }));
    expect(store.departedTool('a__echo')).toBeUndefined();

    store.setSnapshot(snap('a', { namespace: 'prefix', tools: [tool('echo')] }));
    store.removeServer('a', { remember: true });
    store.setOrder(['b']);
    expect(store.departedTool('a__echo')).toBeUndefined();

    store.removeServer('b');
    expect(store.departedTool('b__echo')).toBeUndefined();
  });

  it('starts empty', () => {
    const store = new CatalogStore();
    expect(store.current.items('tools')).toEqual([]);
    expect(store.current.servers).toEqual([]);
  });

  it('notifies on real changes only, with the diff and the new catalog', () => {
    const store = new CatalogStore();
    const listener = vi.fn();
    store.onChange(listener);

    store.setSnapshot(snap('a', { tools: [tool('echo')] }));
    expect(listener).toHaveBeenCalledTimes(1);
    expect(listener).toHaveBeenLastCalledWith({ tools: true, prompts: false, resources: false }, store.current);

    store.setSnapshot(snap('a', { tools: [tool('echo')] }));
    store.setOrder(['a']);
    store.setNaming({ separator: '__', maxLength: 64 });
    store.removeServer('not-there');
    expect(listener).toHaveBeenCalledTimes(1);

    store.setSnapshot(snap('a', { tools: [tool('echo', 'changed')], resources: [{ uri: 'mem://1', name: 'one' }] }));
    expect(listener).toHaveBeenLastCalledWith({ tools: true, prompts: false, resources: true }, store.current);

    store.removeServer('a');
    expect(listener).toHaveBeenCalledTimes(3);
    expect(store.current.items('tools')).toEqual([]);
  });

  it('builds in config order, whatever order snapshots arrive in', () => {
    const store = new CatalogStore();
    store.setSnapshot(snap('second', { tools: [tool('echo')] }));
    store.setSnapshot(snap('first', { tools: [tool('echo')] }));
    store.setOrder(['first', 'second']);
    expect(store.current.resolveTool('echo')).toEqual({ server: 'first', name: 'echo' });
    store.setOrder(['second', 'first']);
    expect(store.current.resolveTool('echo')).toEqual({ server: 'second', name: 'echo' });
  });

  describe('once keepMeanings is called, a public key keeps its meaning', () => {
    const hello = 'fixture://static/hello';
    const fixture = (server: string) => snap(server, { tools: [tool('echo')], resources: [{ uri: hello, name: 'hello' }] });
    /** a and b both offer echo and hello, a first in config order: a holds both keys. */
    const keepingBoth = () => {
      const store = new CatalogStore();
      store.setOrder(['a', 'b']);
      store.setSnapshot(fixture('a'));
      store.setSnapshot(fixture('b'));
      store.keepMeanings();
      return store;
    };

    it('before it, config order decides, whatever order the first snapshots arrive in', () => {
      const store = new CatalogStore();
      store.setOrder(['a', 'b']);
      store.setSnapshot(fixture('b'));
      store.setSnapshot(fixture('a'));
      store.keepMeanings();
      expect(store.current.resolveTool('echo')).toEqual({ server: 'a', name: 'echo' });
      expect(store.current.resolveResource(hello)).toEqual({ server: 'a', uri: hello });
    });

    it('a server added ahead of the holder (a reload) gets the prefixed name and rewritten URI', () => {
      const store = new CatalogStore();
      store.setOrder(['b']);
      store.setSnapshot(fixture('b'));
      store.keepMeanings();
      store.setOrder(['a0', 'b']);
      store.setSnapshot(fixture('a0'));
      expect(store.current.resolveTool('echo')).toEqual({ server: 'b', name: 'echo' });
      expect(store.current.resolveResource(hello)).toEqual({ server: 'b', uri: hello });
      expect(store.current.toPublicUri('a0', hello)).toBe('switchboard://a0/fixture://static/hello');
    });

    it('an earlier server down and back never takes the keys the other one held meanwhile, nor loses its own', () => {
      const store = keepingBoth();
      store.removeServer('a', { remember: true });
      // a's keys are reserved for it: b is not moved onto them.
      expect(store.current.resolveTool('echo')).toBeUndefined();
      expect(store.departedTool('echo')).toEqual({ server: 'a', name: 'echo' });
      expect(store.current.resolveResource(hello)).toEqual({ server: 'a', uri: hello });
      store.setSnapshot(snap('b', { tools: [tool('echo'), tool('more')], resources: [{ uri: hello, name: 'hello' }] }));
      expect(store.current.resolveResource(hello)).toEqual({ server: 'a', uri: hello });
      store.setSnapshot(fixture('a'));
      expect(store.current.resolveTool('echo')).toEqual({ server: 'a', name: 'echo' });
      expect(store.current.resolveTool('b__echo')).toEqual({ server: 'b', name: 'echo' });
      expect(store.current.resolveResource(hello)).toEqual({ server: 'a', uri: hello });
    });

    it('a holder that drops an item (list_changed) keeps its key while it is configured', () => {
      const store = keepingBoth();
      store.setSnapshot(snap('a', { tools: [tool('other')] }));
      // A host that remembers a's echo must not reach b's with arguments meant for a.
      expect(store.current.resolveTool('echo')).toBeUndefined();
      expect(store.current.resolveTool('b__echo')).toEqual({ server: 'b', name: 'echo' });
      // b is the sole resource server now; the URI a gave up still routes to a.
      expect(store.current.resolveResource(hello)).toEqual({ server: 'a', uri: hello });
      expect(store.current.toPublicUri('b', hello)).toBe('switchboard://b/fixture://static/hello');
      store.setSnapshot(fixture('a'));
      expect(store.current.resolveTool('echo')).toEqual({ server: 'a', name: 'echo' });
      expect(store.current.resolveTool('b__echo')).toEqual({ server: 'b', name: 'echo' });
    });

    it('a server removed from the config gives its keys up, but not to a server that was kept off them', () => {
      const store = keepingBoth();
      store.removeServer('a', { remember: true });
      store.setOrder(['b']);
      expect(store.current.resolveTool('echo')).toBeUndefined();
      expect(store.current.resolveTool('b__echo')).toEqual({ server: 'b', name: 'echo' });
      // b is the sole resource server, but it has its own hello under its gateway URI.
      expect(store.current.resolveResource(hello)).toBeUndefined();
      expect(store.current.resolveResource('switchboard://b/fixture://static/hello')).toEqual({ server: 'b', uri: hello });
      // A server added afresh may take the free keys.
      store.setOrder(['b', 'c']);
      store.setSnapshot(fixture('c'));
      expect(store.current.resolveTool('echo')).toEqual({ server: 'c', name: 'echo' });
      expect(store.current.resolveResource(hello)).toEqual({ server: 'c', uri: hello });
    });

    it('a config reorder does not move a held name', () => {
      const store = new CatalogStore();
      store.setOrder(['first', 'second']);
      store.setSnapshot(snap('second', { tools: [tool('echo')] }));
      store.setSnapshot(snap('first', { tools: [tool('echo')] }));
      store.keepMeanings();
      store.setOrder(['second', 'first']);
      expect(store.current.resolveTool('echo')).toEqual({ server: 'first', name: 'echo' });
    });
  });

  it('keeps servers missing from the order, after the ordered ones', () => {
    const store = new CatalogStore();
    store.setOrder(['b']);
    store.setSnapshot(snap('a', { tools: [tool('echo')] }));
    store.setSnapshot(snap('b', { tools: [tool('echo')] }));
    expect(store.current.servers).toEqual(['b', 'a']);
  });

  it('applies naming options', () => {
    const store = new CatalogStore();
    store.setSnapshot(snap('a', { namespace: 'prefix', tools: [tool('echo')] }));
    store.setNaming({ separator: '.', maxLength: 64 });
    expect(store.current.resolveTool('a.echo')).toEqual({ server: 'a', name: 'echo' });
  });

  it('stops notifying after unsubscribe, and one failing listener does not starve the others', () => {
    const store = new CatalogStore();
    const failing = vi.fn(() => {
      throw new Error('listener bug');
    });
    const healthy = vi.fn();
    const unsubscribe = store.onChange(failing);
    store.onChange(healthy);
    expect(() => store.setSnapshot(snap('a', { tools: [tool('x')] }))).toThrow('listener bug');
    expect(healthy).toHaveBeenCalledTimes(1);
    expect(store.current.resolveTool('x')).toEqual({ server: 'a', name: 'x' });
    unsubscribe();
    store.setSnapshot(snap('a', { tools: [tool('y')] }));
    expect(failing).toHaveBeenCalledTimes(1);
    expect(healthy).toHaveBeenCalledTimes(2);
  });

  it("tells onWarning of each new warning of a rebuilt catalog once, not at every rebuild while it lasts", () => {
    const store = new CatalogStore();
    const warned: string[] = [];
    store.onWarning((w) => warned.push(w));
    const twice = snap('a', { tools: [tool('x'), tool('x')] });
    store.setSnapshot(twice);
    store.setSnapshot(snap('b', { tools: [tool('y')] }));
    expect(warned).toEqual(['upstream "a" lists tool "x" more than once; only the first is served']);
    store.setSnapshot(snap('a', { tools: [tool('x')] }));
    store.setSnapshot(twice);
    expect(warned).toHaveLength(2);
  });
});

