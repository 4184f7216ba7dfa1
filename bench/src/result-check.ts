/**
 * `node bench/dist/result-check.js`: what the check of an upstream's tools/call result
 * (libs/relay/src/results) costs per call, in ns, on typical results: a text block, five
 * mixed blocks, and a structured result checked against its compiled outputSchema, without
 * and with `pattern`s (three strings, run by the gateway's linear-time matcher). Beside
 * them, JSON.stringify of the same result, which every audited call already pays (its
 * response_bytes). A measurement script, not a test.
 */
import { CatalogStore } from '@switchboard/catalog';
import { silentLogger } from '@switchboard/observability';
import { OutputSchemas, toolResultProblems } from '@switchboard/relay';

type Item = Record<string, unknown>;

const ROUNDS = 7;
const CALLS_PER_ROUND = 1_000_000;

const text = { content: [{ type: 'text', text: 'The weather in Berlin is 14 °C, light rain, wind 12 km/h from the west.'.repeat(3) }] };
const mixed = {
  content: [
    { type: 'text', text: 'Found 3 files' },
    { type: 'resource_link', uri: 'file:///src/a.ts', name: 'a.ts', mimeType: 'text/x-typescript' },
    { type: 'resource_link', uri: 'file:///src/b.ts', name: 'b.ts' },
    { type: 'resource', resource: { uri: 'file:///src/c.ts', text: 'export const c = 1;' } },
    { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
  ],
  _meta: { 'example.com/trace': 'abc' },
};
const structured = {
  content: [{ type: 'text', text: '{"city":"Berlin","celsius":14,"conditions":["rain","wind"]}' }],
  structuredContent: { city: 'Berlin', celsius: 14, conditions: ['rain', 'wind'] },
};
const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, celsius: { type: 'number' }, conditions: { type: 'array', items: { type: 'string' } } },
  required: ['city', 'celsius'],
};
const PATTERNED_SCHEMA = {
  ...WEATHER_SCHEMA,
  properties: { ...WEATHER_SCHEMA.properties, city: { type: 'string', pattern: '^[A-Z][a-z]+(?: [A-Z][a-z]+)*$' }, conditions: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' } } },
};

/** The median over ROUNDS of ns per call of `run`. */
function nsPerCall(run: () => unknown): number {
  let sink = 0;
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < CALLS_PER_ROUND; i++) if (run() !== undefined) sink++;
    rounds.push(Number(process.hrtime.bigint() - started) / CALLS_PER_ROUND);
  }
  if (sink < 0) console.log(sink);
  return rounds.sort((a, b) => a - b)[ROUNDS >> 1];
}

async function main(): Promise<void> {
  const store = new CatalogStore();
  const schemas = new OutputSchemas(store, silentLogger());
  const tools = [
    { name: 'weather', inputSchema: { type: 'object' }, outputSchema: WEATHER_SCHEMA },
    { name: 'patterned', inputSchema: { type: 'object' }, outputSchema: PATTERNED_SCHEMA },
  ];
  store.setSnapshot({ server: 'up', prefix: 'up', namespace: 'prefix', tools, prompts: [], resources: [], resourceTemplates: [] });
  while (schemas.pending) await schemas.pending;
  const check = schemas.checkOf('up', 'weather')!;
  const patterned = schemas.checkOf('up', 'patterned')!;
  const cases: Array<[string, Item, (() => unknown)]> = [
    ['one text block', text, () => toolResultProblems(text)],
    ['five mixed blocks and _meta', mixed, () => toolResultProblems(mixed)],
    ['structuredContent against its outputSchema', structured, () => toolResultProblems(structured, check)],
    ['the same, its three strings against patterns', structured, () => toolResultProblems(structured, patterned)],
  ];
  console.log('| result | check, ns/call | JSON.stringify of it, ns/call |\n| --- | --- | --- |');
  for (const [name, result, run] of cases) {
    if (run() !== undefined) throw new Error(`${name}: the check found problems`);
    console.log(`| ${name} | ${nsPerCall(run).toFixed(0)} | ${nsPerCall(() => (JSON.stringify(result).length < 0 ? 1 : undefined)).toFixed(0)} |`);
  }
}

void main();
