import type { NamespaceMode } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { buildCatalog, MAX_GIVEN_UP_PER_SERVER } from './build-catalog.js';
import type { CatalogClaims, Item, UpstreamSnapshot } from './catalog.types.js';

const opts = { separator: '__', maxLength: 64 };

function snap(server: string, parts: Partial<UpstreamSnapshot> = {}): UpstreamSnapshot {
  return { server, prefix: server, namespace: 'prefix', tools: [], prompts: [], resources: [], resourceTemplates: [], ...parts };
}

/** A tool the way real servers describe one, with every optional field filled in. */
function tool(name: string, extra: Item = {}): Item {
  return {
    name,
    title: `The ${name} tool`,
    description: `Does ${name}.`,
    inputSchema: {
      type: 'object',
      properties: { owner: { type: 'string' }, repo: { type: 'string' }, labels: { type: 'array', items: { type: 'string' } } },
      required: ['owner', 'repo'],
    },
    outputSchema: { type: 'object', properties: { url: { type: 'string', format: 'uri' } } },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    icons: [{ src: 'https://example.com/icon.svg', mimeType: 'image/svg+xml', sizes: ['any'] }],
    _meta: { 'io.example/version': 3 },
    ...extra,
  };
}

const prompt = (name: string): Item => ({ name, title: name, description: `Prompt ${name}`, arguments: [{ name: 'topic', required: true }] });
const names = (items: readonly Item[]) => items.map((i) => i.name);
const withMode = (mode: NamespaceMode) => [
  snap('github', { namespace: mode, tools: [tool('search'), tool('create_issue')] }),
  snap('gitlab', { namespace: mode, tools: [tool('search'), tool('merge')] }),
];

describe('buildCatalog: tool and prompt names', () => {
  it('prefix mode names every tool <prefix>__<name> and routes back to the original', () => {
    const catalog = buildCatalog(withMode('prefix'), opts);
    expect(names(catalog.items('tools'))).toEqual(['github__create_issue', 'github__search', 'gitlab__merge', 'gitlab__search']);
    expect(catalog.resolveTool('gitlab__search')).toEqual({ server: 'gitlab', name: 'search' });
  });

  it('auto mode prefixes only the colliding names', () => {
    const catalog = buildCatalog(withMode('auto'), opts);
    expect(names(catalog.items('tools'))).toEqual(['create_issue', 'github__search', 'gitlab__search', 'merge']);
    expect(catalog.resolveTool('merge')).toEqual({ server: 'gitlab', name: 'merge' });
    expect(catalog.resolveTool('search')).toBeUndefined();
  });

  it('none mode lets the first server in config order keep a contested name', () => {
    const catalog = buildCatalog(withMode('none'), opts);
    expect(names(catalog.items('tools'))).toEqual(['create_issue', 'gitlab__search', 'merge', 'search']);
    expect(catalog.resolveTool('search')).toEqual({ server: 'github', name: 'search' });
    expect(catalog.resolveTool('gitlab__search')).toEqual({ server: 'gitlab', name: 'search' });
  });

  it('uses the alias as prefix and names prompts by the same rule', () => {
    const catalog = buildCatalog([snap('github-enterprise', { prefix: 'ghe', prompts: [prompt('triage')] })], opts);
    expect(names(catalog.items('prompts'))).toEqual(['ghe__triage']);
    expect(catalog.resolvePrompt('ghe__triage')).toEqual({ server: 'github-enterprise', name: 'triage' });
    expect(catalog.resolveTool('ghe__triage')).toBeUndefined();
  });

  it('keeps public names within 64 characters and still routes them', () => {
    const long = 'generate_a_very_detailed_quarterly_report_for_every_department_and_region';
    const catalog = buildCatalog([snap('analytics', { tools: [tool(long)] })], opts);
    const [publicName] = names(catalog.items('tools')) as string[];
    expect(publicName).toHaveLength(64);
    expect(publicName.startsWith('analytics__generate_')).toBe(true);
    expect(catalog.resolveTool(publicName)).toEqual({ server: 'analytics', name: long });
  });

  it('changes nothing but the name: every other field is passed through untouched', () => {
    const original = tool('create_issue', { futureField: { nested: [1, 2] } });
    const snapshot = snap('github', { tools: [original] });
    const before = structuredClone(snapshot);
    const [published] = buildCatalog([snapshot], opts).items('tools');
    const { name, ...rest } = published;
    const { name: originalName, ...originalRest } = original;
    expect(name).toBe('github__create_issue');
    expect(originalName).toBe('create_issue');
    expect(rest).toStrictEqual(originalRest);
    expect(Object.keys(published)).toEqual(Object.keys(original));
    expect(snapshot).toStrictEqual(before);
  });

  it('serves only the first of two same-named items from one upstream and warns', () => {
    const first = tool('search', { description: 'first' });
    const catalog = buildCatalog(
      [snap('docs', { namespace: 'none', tools: [first, tool('search', { description: 'second' }), { description: 'nameless' }] })],
      opts,
    );
    expect(catalog.items('tools')).toEqual([first]);
    expect(catalog.warnings).toEqual([
      'upstream "docs" lists tool "search" more than once; only the first is served',
      'upstream "docs" lists a tool without a name; it is not served',
    ]);
  });

  it('a duplicate within one upstream is not a collision between servers in auto mode', () => {
    const catalog = buildCatalog([snap('a', { namespace: 'auto', tools: [tool('echo'), tool('echo')] })], opts);
    expect(names(catalog.items('tools'))).toEqual(['echo']);
  });

  it('returns undefined for unknown names', () => {
    const catalog = buildCatalog(withMode('prefix'), opts);
    expect(catalog.resolveTool('nope')).toBeUndefined();
    expect(catalog.resolveTool('search')).toBeUndefined();
    expect(catalog.resolvePrompt('github__search')).toBeUndefined();
    expect(catalog.resolveTemplate('file:///{path}')).toBeUndefined();
  });
});

describe('buildCatalog: order and bookkeeping', () => {
  it('sorts each list by code unit, independent of the order upstreams list items in', () => {
    // Names the naming rule keeps as they are (it makes 'é' safe, and hashes it).
    const items = [tool('b'), tool('B'), tool('a'), tool('_z'), tool('.e')];
    const one = buildCatalog([snap('s', { namespace: 'none', tools: items }), snap('t', { namespace: 'none', tools: [tool('a')] })], opts);
    const two = buildCatalog(
      [snap('s', { namespace: 'none', tools: [...items].reverse() }), snap('t', { namespace: 'none', tools: [tool('a')] })],
      opts,
    );
    expect(names(one.items('tools'))).toEqual(['.e', 'B', '_z', 'a', 'b', 't__a']);
    expect(one.items('tools')).toEqual(two.items('tools'));
    expect(one.fingerprints).toEqual(two.fingerprints);
  });

  it('names do not depend on item order even when one server meets itself', () => {
    // "x" collides with t's "x" and becomes "s__x", which s also offers as a bare name.
    const forward = buildCatalog([snap('s', { namespace: 'auto', tools: [tool('x'), tool('s__x')] }), snap('t', { namespace: 'auto', tools: [tool('x')] })], opts);
    const backward = buildCatalog([snap('s', { namespace: 'auto', tools: [tool('s__x'), tool('x')] }), snap('t', { namespace: 'auto', tools: [tool('x')] })], opts);
    expect(names(forward.items('tools'))).toEqual(names(backward.items('tools')));
    expect(new Set(names(forward.items('tools'))).size).toBe(3);
  });

  it('counts items per server and lists who offers what, in config order', () => {
    const catalog = buildCatalog(
      [
        snap('fs', { tools: [tool('read'), tool('write')], resources: [{ uri: 'file:///a' }], resourceTemplates: [{ uriTemplate: 'file:///{+p}' }] }),
        snap('github', { tools: [tool('search')], prompts: [prompt('review')] }),
        snap('idle'),
      ],
      opts,
    );
    expect(catalog.counts()).toEqual([
      { server: 'fs', tools: 2, prompts: 0, resources: 1, resourceTemplates: 1 },
      { server: 'github', tools: 1, prompts: 1, resources: 0, resourceTemplates: 0 },
      { server: 'idle', tools: 0, prompts: 0, resources: 0, resourceTemplates: 0 },
    ]);
    expect(catalog.serversWith('tools')).toEqual(['fs', 'github']);
    expect(catalog.serversWith('prompts')).toEqual(['github']);
    expect(catalog.serversWith('resourceTemplates')).toEqual(['fs']);
    expect(catalog.servers).toEqual(['fs', 'github', 'idle']);
  });

  it('ignores a second snapshot for the same server and warns', () => {
    const catalog = buildCatalog([snap('a', { tools: [tool('x')] }), snap('a', { tools: [tool('y')] })], opts);
    expect(names(catalog.items('tools'))).toEqual(['a__x']);
    expect(catalog.warnings).toHaveLength(1);
  });

  it('public items are frozen copies', () => {
    const catalog = buildCatalog([snap('a', { tools: [tool('x')] })], opts);
    expect(() => {
      (catalog.items('tools')[0] as Item).name = 'hijack';
    }).toThrow(TypeError);
  });

  it('builds a catalog of 10 servers x 100 tools with unique, routable names', () => {
    const snapshots = Array.from({ length: 10 }, (_, s) =>
      snap(`server-${s}`, { namespace: s % 2 ? 'auto' : 'none', tools: Array.from({ length: 100 }, (_, t) => tool(`tool_${t}`)) }),
    );
    const catalog = buildCatalog(snapshots, opts);
    const all = names(catalog.items('tools')) as string[];
    expect(all).toHaveLength(1000);
    expect(new Set(all).size).toBe(1000);
    for (const name of all) expect(catalog.resolveTool(name)?.name).toMatch(/^tool_\d+$/);
  });
});

/** The claims CatalogStore passes on once `server` is removed from the config. */
function withoutServer(claims: CatalogClaims, server: string): CatalogClaims {
  const keep = <V>(map: ReadonlyMap<string, V>, serverOf: (key: string, value: V) => string) =>
    new Map([...map].filter(([key, value]) => serverOf(key, value) !== server));
  const byClaim = (_: string, claim: { server: string }) => claim.server;
  return {
    tools: keep(claims.tools, byClaim),
    prompts: keep(claims.prompts, byClaim),
    resources: keep(claims.resources, byClaim),
    resourceTemplates: keep(claims.resourceTemplates, byClaim),
    uriPrefixes: keep(claims.uriPrefixes, (key) => key),
    retiredUriPrefixes: keep(claims.retiredUriPrefixes, (_, holder) => holder),
  };
}

describe('buildCatalog: keys keep their meaning (held claims)', () => {
  const hello = 'fixture://static/hello';
  const res = (uri: string): Item => ({ uri, name: uri });
  const fixture = (server: string, namespace: NamespaceMode = 'none') =>
    snap(server, { namespace, tools: [tool('echo')], resources: [res(hello)], resourceTemplates: [{ uriTemplate: 'fixture://t/{id}', name: 't' }] });

  it('a server added ahead of the holder gets the rewritten URI and the prefixed name', () => {
    const before = buildCatalog([fixture('b')], opts);
    const fresh = buildCatalog([fixture('a0'), fixture('b')], opts);
    expect(fresh.resolveResource(hello)).toEqual({ server: 'a0', uri: hello }); // config order, nobody held it

    const after = buildCatalog([fixture('a0'), fixture('b')], opts, before.claims);
    expect(after.resolveResource(hello)).toEqual({ server: 'b', uri: hello });
    expect(after.items('resources').map((r) => r.uri)).toEqual(['fixture://static/hello', 'switchboard://a0/fixture://static/hello']);
    expect(after.toPublicUri('b', hello)).toBe(hello);
    expect(after.resolveTool('echo')).toEqual({ server: 'b', name: 'echo' });
    expect(after.resolveTool('a0__echo')).toEqual({ server: 'a0', name: 'echo' });
    expect(after.resolveTemplate('fixture://t/{id}')).toEqual({ server: 'b', uriTemplate: 'fixture://t/{id}' });
    // Deterministic: the same input gives the same catalog.
    expect(buildCatalog([fixture('a0'), fixture('b')], opts, before.claims).fingerprints).toEqual(after.fingerprints);
  });

  it('a holder that is absent (down) keeps its keys reserved, and its URIs still route to it', () => {
    const both = buildCatalog([fixture('a'), fixture('b')], opts);
    const bAlone = buildCatalog([fixture('b')], opts, both.claims);
    expect(bAlone.resolveTool('echo')).toBeUndefined();
    expect(bAlone.resolveTool('b__echo')).toEqual({ server: 'b', name: 'echo' });
    expect(bAlone.items('resources').map((r) => r.uri)).toEqual(['switchboard://b/fixture://static/hello']);
    // Not handed to b as the sole resource server: a read goes to a and hears "unavailable".
    expect(bAlone.resolveResource(hello)).toEqual({ server: 'a', uri: hello });
    // The reservation outlives further builds while the claims are passed on.
    const again = buildCatalog([fixture('b')], opts, bAlone.claims);
    expect(again.resolveResource(hello)).toEqual({ server: 'a', uri: hello });
    // a back: nothing moved.
    const back = buildCatalog([fixture('a'), fixture('b')], opts, again.claims);
    expect(back.items('tools')).toEqual(both.items('tools'));
    expect(back.items('resources')).toEqual(both.items('resources'));
    // Without the claims (a removed from the config), b takes the free keys.
    const gone = buildCatalog([fixture('b')], opts);
    expect(gone.resolveResource(hello)).toEqual({ server: 'b', uri: hello });
    expect(gone.resolveTool('echo')).toEqual({ server: 'b', name: 'echo' });
  });

  it('a holder that stops listing the item keeps the key; the server kept off it keeps its own form', () => {
    const before = buildCatalog([fixture('a0'), fixture('b')], opts, buildCatalog([fixture('b')], opts).claims);
    const bDropped = buildCatalog([fixture('a0'), snap('b', { namespace: 'none' })], opts, before.claims);
    expect(bDropped.resolveTool('echo')).toBeUndefined();
    expect(bDropped.resolveTool('a0__echo')).toEqual({ server: 'a0', name: 'echo' });
    expect(bDropped.items('resources').map((r) => r.uri)).toEqual(['switchboard://a0/fixture://static/hello']);
    // a0 is the sole resource server now, but a read of the URI b gave up still goes to b.
    expect(bDropped.resolveResource(hello)).toEqual({ server: 'b', uri: hello });
    expect(bDropped.resolveTemplate('fixture://t/{id}')).toEqual({ server: 'b', uriTemplate: 'fixture://t/{id}' });
    // The reservation outlives further builds; b listing the items again gets them back.
    const again = buildCatalog([fixture('a0'), snap('b', { namespace: 'none' })], opts, bDropped.claims);
    expect(again.resolveTool('echo')).toBeUndefined();
    const back = buildCatalog([fixture('a0'), fixture('b')], opts, again.claims);
    expect(back.items('tools')).toEqual(before.items('tools'));
    expect(back.items('resources')).toEqual(before.items('resources'));
  });

  it('a namespace change renames what the mode gave, not a name a server was kept off', () => {
    const a = (namespace: NamespaceMode) => snap('a', { namespace, tools: [tool('echo'), tool('only_a')] });
    const b = snap('b', { namespace: 'auto', tools: [tool('echo')] });
    const start = buildCatalog([a('prefix'), b], opts);
    expect(names(start.items('tools'))).toEqual(['a__echo', 'a__only_a', 'echo']);
    // a switched to auto (a reload): a__only_a was its mode's name, so it becomes bare; b has
    // echo, so a's echo stays prefixed, now because a was kept off echo.
    const auto = buildCatalog([a('auto'), b], opts, start.claims);
    expect(names(auto.items('tools'))).toEqual(['a__echo', 'echo', 'only_a']);
    // b removed from the config (its claims gone): echo is free, but not for a.
    const bGone = buildCatalog([a('auto')], opts, withoutServer(auto.claims, 'b'));
    expect(names(bGone.items('tools'))).toEqual(['a__echo', 'only_a']);
    // A server that never had another name for it may take it.
    const c = snap('c', { namespace: 'auto', tools: [tool('echo')] });
    expect(buildCatalog([a('auto'), c], opts, bGone.claims).resolveTool('echo')).toEqual({ server: 'c', name: 'echo' });
  });

  it('a bare URI a server was kept off reaches it neither by its template nor as the sole resource server', () => {
    const a = snap('a', { resources: [res('mem://x/1')] });
    const b = snap('b', { resources: [res('mem://x/1')], resourceTemplates: [{ uriTemplate: 'mem://x/{id}', name: 'x' }] });
    const both = buildCatalog([a, b], opts);
    expect(both.toPublicUri('b', 'mem://x/1')).toBe('switchboard://b/mem://x/1');
    // a removed from the config: mem://x/1 meant a's resource, so it is not found rather than b's.
    const aGone = buildCatalog([b], opts, withoutServer(both.claims, 'a'));
    expect(aGone.resolveResource('mem://x/1')).toBeUndefined();
    expect(aGone.resolveResource('switchboard://b/mem://x/1')).toEqual({ server: 'b', uri: 'mem://x/1' });
    expect(aGone.resolveResource('mem://x/2')).toEqual({ server: 'b', uri: 'mem://x/2' });
    const noTemplate = buildCatalog([snap('b', { resources: [res('mem://x/1')] })], opts, withoutServer(both.claims, 'a'));
    expect(noTemplate.resolveResource('mem://x/1')).toBeUndefined();
    expect(noTemplate.resolveResource('mem://y')).toEqual({ server: 'b', uri: 'mem://y' });
  });

  it(`a served server keeps its newest ${MAX_GIVEN_UP_PER_SERVER} given-up keys reserved, and gives older ones up`, () => {
    const tools = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ name: `t${from + i}` }));
    const a = (list: Item[]) => snap('a', { namespace: 'none', tools: list });
    const first = buildCatalog([a(tools(0, 1))], opts);
    const renamed = buildCatalog([a(tools(1, MAX_GIVEN_UP_PER_SERVER))], opts, first.claims);
    const emptied = buildCatalog([a([])], opts, renamed.claims);
    const b = snap('b', { namespace: 'none', tools: tools(0, 2) });
    const after = buildCatalog([a([]), b], opts, emptied.claims);
    expect(names(after.items('tools'))).toEqual(['b__t1', 't0']);
  });

  it("an alias change keeps the names and gateway URIs published under the old prefix from another server", () => {
    const b = snap('b', { resources: [res(hello)] });
    const a = (prefix: string) => snap('a', { prefix, tools: [tool('echo')], resources: [res(hello), res('mem://a/1')] });
    const start = buildCatalog([b, a('old')], opts);
    expect(start.resolveTool('old__echo')).toEqual({ server: 'a', name: 'echo' });
    expect(start.toPublicUri('a', hello)).toBe(`switchboard://old/${hello}`);
    // a's alias changes (a reload); then a server whose alias is a's old one is added.
    const renamed = buildCatalog([b, a('new')], opts, start.claims);
    expect(renamed.resolveTool('new__echo')).toEqual({ server: 'a', name: 'echo' });
    expect(renamed.resolveTool('old__echo')).toBeUndefined();
    const c = snap('c', { prefix: 'old', tools: [tool('echo')], resources: [res(hello), res('mem://c/1')] });
    const added = buildCatalog([b, a('new'), c], opts, renamed.claims);
    for (const catalog of [added, buildCatalog([b, a('new'), c], opts, added.claims)]) {
      // Neither a name nor a gateway URI a host got from a under the old prefix reaches c.
      expect(catalog.resolveTool('old__echo')).toBeUndefined();
      expect(catalog.resolveTool(String(catalog.items('tools').find((t) => t.name !== 'new__echo')?.name))).toEqual({ server: 'c', name: 'echo' });
      expect(catalog.resolveResource(`switchboard://old/${hello}`)).toEqual({ server: 'a', uri: hello });
      expect(catalog.resolveResource('switchboard://old/mem://a/1')).toEqual({ server: 'a', uri: 'mem://a/1' });
      expect(catalog.toPublicUri('a', hello)).toBe(`switchboard://new/${hello}`);
      expect(catalog.toPublicUri('c', hello)).toMatch(/^switchboard:\/\/old-[0-9a-f]{8}\/fixture:\/\/static\/hello$/);
    }
    // a removed from the config gives the old prefix up, to a server that did not have it either.
    const aGone = buildCatalog([b, c], opts, withoutServer(added.claims, 'a'));
    expect(aGone.toPublicUri('c', hello)).toMatch(/^switchboard:\/\/old-[0-9a-f]{8}\//);
    const d = snap('d', { prefix: 'old', resources: [res(hello)] });
    expect(buildCatalog([b, d], opts, withoutServer(added.claims, 'a')).toPublicUri('d', hello)).toBe(`switchboard://old/${hello}`);
  });

  it('gateway URI prefixes stay with their server when a server whose prefix sanitizes alike is added ahead', () => {
    const dotted = snap('a.b', { resources: [res(hello)] });
    const plain = snap('a_b', { resources: [res(hello)] });
    const before = buildCatalog([snap('x', { resources: [res(hello)] }), plain], opts);
    expect(before.resolveResource('switchboard://a_b/x')).toEqual({ server: 'a_b', uri: 'x' });
    const after = buildCatalog([snap('x', { resources: [res(hello)] }), dotted, plain], opts, before.claims);
    expect(after.resolveResource('switchboard://a_b/x')).toEqual({ server: 'a_b', uri: 'x' });
    expect(after.toPublicUri('a.b', 'x')).toMatch(/^switchboard:\/\/a_b-[0-9a-f]{8}\/x$/);
  });
});
