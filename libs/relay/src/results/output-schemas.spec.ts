import { CatalogStore, type UpstreamSnapshot } from '@switchboard/catalog';
import { silentLogger } from '@switchboard/observability';
import { describe, expect, it, vi } from 'vitest';
import { MAX_OUTPUT_SCHEMA_CHARS, OutputSchemas } from './output-schemas.js';

type Item = Record<string, unknown>;

const snap = (server: string, tools: Item[]): UpstreamSnapshot => ({ server, prefix: server, namespace: 'prefix', tools, prompts: [], resources: [], resourceTemplates: [] });
const tool = (name: string, outputSchema?: unknown): Item => ({ name, inputSchema: { type: 'object' }, ...(outputSchema !== undefined && { outputSchema }) });
const COUNT = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] };

async function ready(schemas: OutputSchemas): Promise<void> {
  while (schemas.pending) await schemas.pending;
}

describe('OutputSchemas', () => {
  it("compiles each tool's outputSchema when its list is read, and checks structuredContent against it", async () => {
    const store = new CatalogStore();
    const schemas = new OutputSchemas(store, silentLogger());
    store.setSnapshot(snap('up', [tool('count', COUNT), tool('plain')]));
    await ready(schemas);
    const check = schemas.checkOf('up', 'count')!;
    expect(check({ count: 3 })).toBeUndefined();
    expect(check({ count: 'three' })).toContain('must be integer');
    expect(check({})).toContain("must have required property 'count'");
    expect(schemas.checkOf('up', 'plain')).toBeUndefined();
    expect(schemas.checkOf('other', 'count')).toBeUndefined();
  });

  it('compiles a list again only when it is read again, and forgets an upstream that leaves', async () => {
    const store = new CatalogStore();
    const schemas = new OutputSchemas(store, silentLogger());
    store.setSnapshot(snap('up', [tool('count', COUNT)]));
    await ready(schemas);
    const first = schemas.checkOf('up', 'count');
    store.setSnapshot(snap('other', [tool('x')]));
    expect(schemas.checkOf('up', 'count')).toBe(first);
    store.setSnapshot(snap('up', [tool('count', { type: 'object', properties: { count: { type: 'string' } } })]));
    expect(schemas.checkOf('up', 'count')!({ count: 3 })).toContain('must be string');
    store.removeServer('up');
    expect(schemas.checkOf('up', 'count')).toBeUndefined();
  });

  it('keeps two upstreams apart when their schemas share an $id', async () => {
    const store = new CatalogStore();
    const schemas = new OutputSchemas(store, silentLogger());
    store.setSnapshot(snap('a', [tool('t', { $id: 'https://example.com/result.json', type: 'object', properties: { v: { type: 'string' } } })]));
    store.setSnapshot(snap('b', [tool('t', { $id: 'https://example.com/result.json', type: 'object', properties: { v: { type: 'number' } } })]));
    await ready(schemas);
    expect(schemas.checkOf('a', 't')!({ v: 'x' })).toBeUndefined();
    expect(schemas.checkOf('b', 't')!({ v: 1 })).toBeUndefined();
  });

  it('treats a schema it cannot compile, one too long and one whose pattern may backtrack without end as none, with one warning', async () => {
    const store = new CatalogStore();
    const logger = silentLogger();
    const warn = vi.spyOn(logger, 'warn');
    const schemas = new OutputSchemas(store, logger);
    const huge = { type: 'object', description: 'x'.repeat(MAX_OUTPUT_SCHEMA_CHARS) };
    store.setSnapshot(
      snap('up', [
        tool('unresolvable', { type: 'object', properties: { a: { $ref: 'https://example.com/nowhere.json' } } }),
        tool('bad_pattern', { type: 'object', properties: { a: { type: 'string', pattern: '(' } } }),
        tool('huge', huge),
        tool('backtracking', { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } } }),
        tool('fine', COUNT),
      ]),
    );
    await ready(schemas);
    expect(schemas.checkOf('up', 'unresolvable')).toBeUndefined();
    expect(schemas.checkOf('up', 'bad_pattern')).toBeUndefined();
    expect(schemas.checkOf('up', 'huge')).toBeUndefined();
    expect(schemas.checkOf('up', 'backtracking')).toBeUndefined();
    expect(schemas.checkOf('up', 'fine')).toBeDefined();
    const warnings = warn.mock.calls.filter(([, message]) => String(message).includes('could not be compiled'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0][0]).toMatchObject({ upstream: 'up', count: 4 });
  });

  it('checks a schema whose pattern repeats a group split by a separator, as a domain name is', async () => {
    const store = new CatalogStore();
    const schemas = new OutputSchemas(store, silentLogger());
    const domain = { type: 'object', properties: { host: { type: 'string', pattern: '^(?:[a-z0-9-]+\\.)+[a-z]{2,}$' } }, required: ['host'] };
    store.setSnapshot(snap('up', [tool('lookup', domain)]));
    await ready(schemas);
    const check = schemas.checkOf('up', 'lookup')!;
    expect(check({ host: 'mcp.example.com' })).toBeUndefined();
    expect(check({ host: `${'a.'.repeat(5_000)}!` })).toBeDefined();
  });
});

