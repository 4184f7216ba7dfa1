import { CatalogStore, type UpstreamSnapshot } from '@switchboard/catalog';
import { silentLogger } from '@switchboard/observability';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_OUTPUT_SCHEMA_CHARS, OUTPUT_SCHEMAS_BUDGET_MS, OUTPUT_SCHEMAS_REFILL_MS, OutputSchemas, PATTERN_STEPS_PER_RESULT } from './output-schemas.js';

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

  it('keeps the checks of a re-read that lists the same outputSchemas, without compiling them again', async () => {
    const store = new CatalogStore();
    const schemas = new OutputSchemas(store, silentLogger());
    store.setSnapshot(snap('up', [tool('count', COUNT), tool('plain')]));
    await ready(schemas);
    const first = schemas.checkOf('up', 'count');
    store.setSnapshot(snap('up', [tool('count', structuredClone(COUNT)), tool('plain'), tool('new')]));
    expect(schemas.checkOf('up', 'count')).toBe(first);
    store.setSnapshot(snap('up', [tool('count', { ...COUNT, required: [] })]));
    expect(schemas.checkOf('up', 'count')).not.toBe(first);
    expect(schemas.checkOf('up', 'count')!({})).toBeUndefined();
  });

  it(`lets an upstream compile for ${OUTPUT_SCHEMAS_BUDGET_MS} ms at once, that time coming back over ${OUTPUT_SCHEMAS_REFILL_MS / 1000} s, however often it is re-read`, async () => {
    const store = new CatalogStore();
    const logger = silentLogger();
    const warn = vi.spyOn(logger, 'warn');
    // A clock that moves `step` ms each time it is read: a compile then seems to take that long.
    let [clock, step] = [0, 100];
    const schemas = new OutputSchemas(store, logger, () => (clock += step));
    const tools = (version: number) => Array.from({ length: 10 }, (_, i) => tool(`t${i}`, { ...COUNT, description: `v${version}` }));
    const checked = () => Array.from({ length: 10 }, (_, i) => schemas.checkOf('up', `t${i}`) !== undefined).filter(Boolean).length;
    store.setSnapshot(snap('up', tools(1)));
    await ready(schemas);
    // Read before each schema, 100 ms apart: the first four start within the 500 ms, and the read overran by 600.
    expect(checked()).toBe(4);
    expect(JSON.stringify(warn.mock.calls.at(-1)?.[0])).toContain(`the upstream's compile time (${OUTPUT_SCHEMAS_BUDGET_MS} ms, back over 10 s) was spent`);
    step = 0;
    store.setSnapshot(snap('up', tools(2)));
    expect(checked()).toBe(0);
    clock += OUTPUT_SCHEMAS_REFILL_MS * 1.2; // 600 ms back: what the first read overran, and no more
    store.setSnapshot(snap('up', tools(3)));
    expect(checked()).toBe(0);
    clock += OUTPUT_SCHEMAS_REFILL_MS * 2;
    store.setSnapshot(snap('up', tools(4)));
    expect(checked()).toBe(10);
  });

  it('keeps what it compiled of a list it ran out of time for while re-reads list the same schemas, and compiles the rest once its time is back', async () => {
    const store = new CatalogStore();
    let [clock, step] = [0, 100];
    const schemas = new OutputSchemas(store, silentLogger(), () => (clock += step));
    // Another tool each time: a re-read that changes nothing a host sees does not reach OutputSchemas.
    let reads = 0;
    const tools = () => [...Array.from({ length: 10 }, (_, i) => tool(`t${i}`, COUNT)), tool(`other${++reads}`)];
    const checked = () => Array.from({ length: 10 }, (_, i) => schemas.checkOf('up', `t${i}`) !== undefined).filter(Boolean).length;
    store.setSnapshot(snap('up', tools()));
    await ready(schemas);
    expect(checked()).toBe(4);
    step = 0;
    store.setSnapshot(snap('up', tools()));
    expect(checked()).toBe(4);
    clock += OUTPUT_SCHEMAS_REFILL_MS * 3;
    store.setSnapshot(snap('up', tools()));
    expect(checked()).toBe(10);
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

  it('treats a schema it cannot compile, one too long and one whose pattern needs a backtracking engine as none, with one warning', async () => {
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
        tool('backreference', { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)\\1$' } } }),
        tool('fine', COUNT),
      ]),
    );
    await ready(schemas);
    expect(schemas.checkOf('up', 'unresolvable')).toBeUndefined();
    expect(schemas.checkOf('up', 'bad_pattern')).toBeUndefined();
    expect(schemas.checkOf('up', 'huge')).toBeUndefined();
    expect(schemas.checkOf('up', 'backreference')).toBeUndefined();
    expect(schemas.checkOf('up', 'fine')).toBeDefined();
    const warnings = warn.mock.calls.filter(([, message]) => String(message).includes('could not be compiled'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0][0]).toMatchObject({ upstream: 'up', count: 4 });
    expect(JSON.stringify(warnings[0][0])).toContain('is not one the gateway can match in linear time: it has a backreference');
  });

  describe('runs the patterns of an upstream, which backtrack as they please in JavaScript', () => {
    const POLYNOMIAL = '^\\d*\\d*\\d*\\d*\\d*x$';
    const EXPONENTIAL = '^(\\w+\\s?)*$';
    const schema = {
      type: 'object',
      properties: { digits: { type: 'string', pattern: POLYNOMIAL }, words: { type: 'string', pattern: '^(a+)+$' } },
      patternProperties: { '.*a.*a.*a.*b': { type: 'number' } },
      propertyNames: { pattern: EXPONENTIAL },
    };

    afterEach(() => vi.restoreAllMocks());

    /** JavaScript's engine, refusing these patterns: ^\d*..x$ against 50,000 digits would take it years. */
    function guardBacktracking(): void {
      const test = RegExp.prototype.test;
      vi.spyOn(RegExp.prototype, 'test').mockImplementation(function (this: RegExp, input: string) {
        if ([POLYNOMIAL, EXPONENTIAL, '^(a+)+$', '.*a.*a.*a.*b'].includes(this.source)) throw new Error(`the backtracking engine ran ${this.source}`);
        return test.call(this, input);
      });
    }

    it('without backtracking, in steps linear in the string, whatever the pattern', async () => {
      const store = new CatalogStore();
      const schemas = new OutputSchemas(store, silentLogger());
      store.setSnapshot(snap('up', [tool('t', schema), tool('digits', { type: 'object', properties: { digits: { type: 'string', pattern: POLYNOMIAL } } })]));
      await ready(schemas);
      guardBacktracking();
      expect(schemas.checkOf('up', 'digits')!({ digits: '1'.repeat(20_000) })).toContain('data/digits must match pattern');
      const check = schemas.checkOf('up', 't')!;
      expect(check({ digits: '123x', words: 'aaa', 'a a a b': 1 })).toBeUndefined();
      expect(check({ digits: '1'.repeat(20_000) })).toContain('data/digits must match pattern');
      expect(check({ words: `${'a'.repeat(20_000)}!` })).toContain('data/words must match pattern');
      expect(check({ ['a'.repeat(20_000)]: 'x' })).toBeUndefined();
      expect(check({ [`${'a'.repeat(20_000)}b`]: 'x' })).toMatch(/^data\/a{200}/);
      expect(check({ [`${'word '.repeat(4_000)}!`]: 1 })).toContain('property name must be valid');
    });

    it('within PATTERN_STEPS_PER_RESULT a result: past it, structuredContent passes unchecked, with a warning', async () => {
      const store = new CatalogStore();
      const logger = silentLogger();
      const warn = vi.spyOn(logger, 'warn');
      const schemas = new OutputSchemas(store, logger);
      store.setSnapshot(snap('up', [tool('t', { type: 'object', properties: { digits: { type: 'array', items: { type: 'string', pattern: '^\\d+$' } } } })]));
      await ready(schemas);
      const check = schemas.checkOf('up', 't')!;
      // Four steps a character (pattern-matcher.ts): 40% of the budget is checked, 120% is not, though a digit is wrong.
      expect(check({ digits: ['1'.repeat(PATTERN_STEPS_PER_RESULT / 10), '1x'] })).toContain('data/digits/1 must match pattern');
      expect(warn).not.toHaveBeenCalled();
      const long = Array.from({ length: 3 }, () => '1'.repeat(PATTERN_STEPS_PER_RESULT / 10));
      expect(check({ digits: [...long, '1x'] })).toBeUndefined();
      expect(warn).toHaveBeenCalledWith({ upstream: 'up', tool: 't', steps: PATTERN_STEPS_PER_RESULT }, expect.stringContaining('passed unchecked'));
      // The budget is each result's: the next one is checked again.
      expect(check({ digits: ['1x'] })).toContain('must match pattern');
    });
  });

  it('does not compile a schema over 16 Ki characters of JSON: one compile of 60,000 holds the daemon over a second', async () => {
    const store = new CatalogStore();
    const schemas = new OutputSchemas(store, silentLogger());
    const properties = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { type: 'integer' }]));
    const within = { type: 'object', properties: properties(500) };
    const over = { type: 'object', properties: properties(700) };
    expect(JSON.stringify(within).length).toBeLessThan(16 * 1024);
    expect(JSON.stringify(over).length).toBeGreaterThan(16 * 1024);
    store.setSnapshot(snap('up', [tool('within', within), tool('over', over)]));
    await ready(schemas);
    expect(schemas.checkOf('up', 'within')!({ p1: 'x' })).toContain('data/p1 must be integer');
    expect(schemas.checkOf('up', 'over')).toBeUndefined();
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

