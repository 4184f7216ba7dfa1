import { describe, expect, it } from 'vitest';
import { buildCatalog } from './build-catalog.js';
import { diff } from './catalog.js';
import type { Item, UpstreamSnapshot } from './catalog.types.js';

const opts = { separator: '__', maxLength: 64 };

function snap(server: string, parts: Partial<UpstreamSnapshot> = {}): UpstreamSnapshot {
  return { server, prefix: server, namespace: 'prefix', tools: [], prompts: [], resources: [], resourceTemplates: [], ...parts };
}

const tool = (name: string, description = `Tool ${name}`): Item => ({
  name,
  description,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  annotations: { readOnlyHint: true },
});

const base = () => [
  snap('github', { tools: [tool('search'), tool('create_issue')], prompts: [{ name: 'review' }] }),
  snap('fs', { resources: [{ uri: 'file:///a', name: 'a' }], resourceTemplates: [{ uriTemplate: 'file:///{+p}', name: 'files' }] }),
];
const none = { tools: false, prompts: false, resources: false };

describe('diff', () => {
  const prev = buildCatalog(base(), opts);

  it('reports no change for an identical rebuild', () => {
    expect(diff(prev, buildCatalog(base(), opts))).toEqual(none);
  });

  it('ignores the order of fields within an item', () => {
    const reordered = base();
    reordered[0].tools = reordered[0].tools.map(({ annotations, inputSchema, description, name }) => ({ annotations, inputSchema, description, name }));
    expect(diff(prev, buildCatalog(reordered, opts))).toEqual(none);
  });

  it('detects an added and a removed tool', () => {
    const added = base();
    added[0].tools = [...added[0].tools, tool('fork')];
    expect(diff(prev, buildCatalog(added, opts))).toEqual({ ...none, tools: true });
    const removed = base();
    removed[0].tools = removed[0].tools.slice(1);
    expect(diff(prev, buildCatalog(removed, opts))).toEqual({ ...none, tools: true });
  });

  it('detects a change deep inside one field', () => {
    const changed = base();
    changed[0].tools = [tool('search'), { ...tool('create_issue'), inputSchema: { type: 'object', properties: { q: { type: 'number' } } } }];
    expect(diff(prev, buildCatalog(changed, opts))).toEqual({ ...none, tools: true });
  });

  it('detects a renamed public name (naming options changed)', () => {
    expect(diff(prev, buildCatalog(base(), { separator: '--', maxLength: 64 }))).toEqual({ tools: true, prompts: true, resources: false });
  });

  it('reports resources for a change in resources or in templates', () => {
    const res = base();
    res[1].resources = [{ uri: 'file:///a', name: 'a', mimeType: 'text/plain' }];
    expect(diff(prev, buildCatalog(res, opts))).toEqual({ ...none, resources: true });
    const tpl = base();
    tpl[1].resourceTemplates = [];
    expect(diff(prev, buildCatalog(tpl, opts))).toEqual({ ...none, resources: true });
  });

  it('a missing previous catalog counts as empty', () => {
    expect(diff(undefined, prev)).toEqual({ tools: true, prompts: true, resources: true });
    expect(diff(undefined, buildCatalog([], opts))).toEqual(none);
  });
});
