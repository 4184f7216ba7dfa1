import { MAX_URI_CHARS } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from './build-catalog.js';
import type { Item, UpstreamSnapshot } from './catalog.types.js';

const opts = { separator: '__', maxLength: 64 };

function snap(server: string, parts: Partial<UpstreamSnapshot> = {}): UpstreamSnapshot {
  return { server, prefix: server, namespace: 'prefix', tools: [], prompts: [], resources: [], resourceTemplates: [], ...parts };
}

const resource = (uri: string, name = uri.split('/').pop()!): Item => ({
  uri,
  name,
  title: `Title of ${name}`,
  mimeType: 'text/markdown',
  size: 1234,
  annotations: { audience: ['user'], priority: 0.5 },
});
const template = (uriTemplate: string): Item => ({ uriTemplate, name: uriTemplate, mimeType: 'text/plain', description: 'files' });
const uris = (items: readonly Item[]) => items.map((i) => i.uri);

// Two filesystem servers that both expose a README and the same template: a common setup.
const fsA = snap('fs-home', { resources: [resource('file:///README.md'), resource('file:///home/notes.md')], resourceTemplates: [template('file:///{+path}')] });
const fsB = snap('fs.work', { resources: [resource('file:///README.md'), resource('file:///work/plan.md')], resourceTemplates: [template('file:///{+path}')] });
const db = snap('db', { resourceTemplates: [template('postgres://main/{table}/schema'), template('search://rows{?q,limit}')] });

describe('resources: collisions and rewriting', () => {
  const catalog = buildCatalog([fsA, fsB, db], opts);

  it('keeps unique URIs; the first server keeps a contested one, later ones are rewritten', () => {
    expect(uris(catalog.items('resources'))).toEqual([
      'file:///README.md',
      'file:///home/notes.md',
      'file:///work/plan.md',
      'switchboard://fs_work/file:///README.md',
    ]);
    expect(catalog.resolveResource('file:///README.md')).toEqual({ server: 'fs-home', uri: 'file:///README.md' });
    expect(catalog.resolveResource('switchboard://fs_work/file:///README.md')).toEqual({ server: 'fs.work', uri: 'file:///README.md' });
  });

  it('changes only the uri of a rewritten resource', () => {
    const rewritten = catalog.items('resources').find((r) => r.uri === 'switchboard://fs_work/file:///README.md')!;
    expect({ ...rewritten, uri: 'file:///README.md' }).toStrictEqual(fsB.resources[0]);
  });

  it('rewrites templates by the same rule and resolves them back', () => {
    expect(catalog.items('resourceTemplates').map((t) => t.uriTemplate)).toEqual([
      'file:///{+path}',
      'postgres://main/{table}/schema',
      'search://rows{?q,limit}',
      'switchboard://fs_work/file:///{+path}',
    ]);
    expect(catalog.resolveTemplate('switchboard://fs_work/file:///{+path}')).toEqual({ server: 'fs.work', uriTemplate: 'file:///{+path}' });
    expect(catalog.resolveTemplate('file:///{+path}')).toEqual({ server: 'fs-home', uriTemplate: 'file:///{+path}' });
  });

  it('routes a URI expanded from a rewritten template to its server', () => {
    expect(catalog.resolveResource('switchboard://fs_work/file:///work/2025/q3.md')).toEqual({ server: 'fs.work', uri: 'file:///work/2025/q3.md' });
  });

  it('routes unlisted URIs by the first matching template in config order', () => {
    expect(catalog.resolveResource('file:///home/ada/todo.md')).toEqual({ server: 'fs-home', uri: 'file:///home/ada/todo.md' });
    expect(catalog.resolveResource('postgres://main/users/schema')).toEqual({ server: 'db', uri: 'postgres://main/users/schema' });
    expect(catalog.resolveResource('search://rows?q=ada&limit=5')).toEqual({ server: 'db', uri: 'search://rows?q=ada&limit=5' });
    expect(catalog.resolveResource('search://rows')).toEqual({ server: 'db', uri: 'search://rows' });
  });

  it('returns undefined when nothing claims a URI and several servers offer resources', () => {
    expect(catalog.resolveResource('postgres://main/users/extra/schema')).toBeUndefined();
    expect(catalog.resolveResource('https://example.com/x')).toBeUndefined();
    expect(catalog.resolveResource('switchboard://unknown/https://example.com/x')).toBeUndefined();
  });

  it.each([
    ['fs-home', 'file:///README.md'],
    ['fs.work', 'file:///README.md'],
    ['fs.work', 'file:///work/plan.md'],
    ['fs.work', 'file:///work/deep/unlisted.md'],
    ['fs-home', 'file:///home/unlisted.md'],
    ['db', 'postgres://main/orders/schema'],
    ['db', 'file:///not-db-territory.md'],
    ['db', 'https://example.com/unclaimed'],
    ['fs-home', 'switchboard://db/nested-gateway-uri'],
  ])('round-trips %s %s through toPublicUri and resolveResource', (server, uri) => {
    expect(catalog.resolveResource(catalog.toPublicUri(server, uri))).toEqual({ server, uri });
  });

  it('toPublicUri leaves a URI alone when it already routes to its server', () => {
    expect(catalog.toPublicUri('fs-home', 'file:///README.md')).toBe('file:///README.md');
    expect(catalog.toPublicUri('fs-home', 'file:///home/ada/todo.md')).toBe('file:///home/ada/todo.md');
    expect(catalog.toPublicUri('db', 'postgres://main/users/schema')).toBe('postgres://main/users/schema');
    expect(catalog.toPublicUri('fs.work', 'file:///work/plan.md')).toBe('file:///work/plan.md');
  });

  it('toPublicUri rewrites a URI that would reach another server', () => {
    expect(catalog.toPublicUri('fs.work', 'file:///README.md')).toBe('switchboard://fs_work/file:///README.md');
    expect(catalog.toPublicUri('fs.work', 'file:///work/new.md')).toBe('switchboard://fs_work/file:///work/new.md');
  });

  it('toPublicUri leaves URIs of a server outside the catalog unchanged', () => {
    expect(catalog.toPublicUri('gone', 'file:///README.md')).toBe('file:///README.md');
  });
});

describe('resources: edge cases', () => {
  it('routes everything to the only server that offers resources', () => {
    const catalog = buildCatalog([snap('tools-only'), snap('docs', { resources: [resource('docs://intro')] })], opts);
    expect(catalog.resolveResource('docs://anything/else')).toEqual({ server: 'docs', uri: 'docs://anything/else' });
    expect(catalog.toPublicUri('docs', 'docs://linked')).toBe('docs://linked');
    expect(catalog.serversWith('resources')).toEqual(['docs']);
  });

  it('routes everything to the only server there is, even one that lists no resources', () => {
    const catalog = buildCatalog([snap('everything')], opts);
    expect(catalog.resolveResource('test://static/resource/1')).toEqual({ server: 'everything', uri: 'test://static/resource/1' });
    expect(catalog.toPublicUri('everything', 'test://static/resource/1')).toBe('test://static/resource/1');
  });

  it('makes an unclaimed resource link routable when several servers exist', () => {
    const catalog = buildCatalog([snap('a'), snap('b')], opts);
    expect(catalog.resolveResource('mem://note/1')).toBeUndefined();
    expect(catalog.toPublicUri('b', 'mem://note/1')).toBe('switchboard://b/mem://note/1');
    expect(catalog.resolveResource('switchboard://b/mem://note/1')).toEqual({ server: 'b', uri: 'mem://note/1' });
  });

  it('always rewrites URIs an upstream gateway already put in the switchboard scheme', () => {
    const inner = 'switchboard://fs/file:///README.md';
    const catalog = buildCatalog([snap('team', { resources: [resource(inner)] })], opts);
    expect(uris(catalog.items('resources'))).toEqual([`switchboard://team/${inner}`]);
    expect(catalog.resolveResource(`switchboard://team/${inner}`)).toEqual({ server: 'team', uri: inner });
  });

  it('gives two servers whose prefixes sanitize alike distinct gateway prefixes', () => {
    const catalog = buildCatalog(
      [snap('a.b', { resources: [resource('x://1')] }), snap('a_b', { resources: [resource('x://1')] }), snap('a-b', { resources: [resource('x://1')] })],
      opts,
    );
    const listed = uris(catalog.items('resources')) as string[];
    expect(new Set(listed).size).toBe(3);
    for (const uri of listed) expect(catalog.resolveResource(uri)?.uri).toBe('x://1');
    expect(new Set(listed.map((u) => catalog.resolveResource(u)?.server))).toEqual(new Set(['a.b', 'a_b', 'a-b']));
  });

  it('serves only the first of two identical URIs from one upstream and warns', () => {
    const catalog = buildCatalog([snap('a', { resources: [resource('x://1', 'one'), resource('x://1', 'two')] })], opts);
    expect(catalog.items('resources').map((r) => r.name)).toEqual(['one']);
    expect(catalog.warnings).toEqual(['upstream "a" lists resource "x://1" more than once; only the first is served']);
  });

  it('leaves out, with a warning, an item whose URI is within the limit but whose gateway URI would not be', () => {
    // Each within the limit as the upstream lists it; wrapped in switchboard://b/ (16 characters), only fits still is.
    const room = MAX_URI_CHARS - 'switchboard://b/'.length;
    const long = `x://${'y'.repeat(room - 3)}`;
    const fits = `z://${'y'.repeat(room - 4)}`;
    const longTemplate = `${'y'.repeat(room - 7)}{id}`;
    const a = snap('a', { resources: [resource(long, 'long'), resource(fits, 'fits')], resourceTemplates: [template(`t://${longTemplate}`)] });
    const b = snap('b', { resources: [resource(long, 'long'), resource(fits, 'fits')], resourceTemplates: [template(`t://${longTemplate}`)] });
    const catalog = buildCatalog([a, b], opts);
    expect(catalog.items('resources').map((r) => [r.uri, r.name])).toEqual([
      [`switchboard://b/${fits}`, 'fits'],
      [long, 'long'],
      [fits, 'fits'],
    ]);
    expect(`switchboard://b/${fits}`).toHaveLength(MAX_URI_CHARS);
    expect(catalog.items('resourceTemplates').map((t) => t.uriTemplate)).toEqual([`t://${longTemplate}`]);
    expect(catalog.warnings).toEqual([
      `upstream "b" lists resource ${JSON.stringify(long.slice(0, 80))} whose gateway uri would be ${MAX_URI_CHARS + 1} characters, and a host may send at most ${MAX_URI_CHARS}; it is not served`,
      `upstream "b" lists resource template ${JSON.stringify(`t://${longTemplate}`.slice(0, 80))} whose gateway uriTemplate would be ${MAX_URI_CHARS + 1} characters, and a host may send at most ${MAX_URI_CHARS}; it is not served`,
    ]);
    expect(catalog.counts().find((c) => c.server === 'b')).toMatchObject({ resources: 1, resourceTemplates: 0 });
  });
});
