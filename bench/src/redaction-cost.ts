/**
 * `node bench/dist/redaction-cost.js [--runs N] [--module PATH]...`: the audit log's default
 * redactor alone, in this process, on the arguments a recorded call typically carries. Every
 * recorded row pays this, so a change to the default patterns is measured here before and
 * after (docs/performance.md, "Redaction").
 *
 * With several --module paths (each a built `redaction/redactor.js`, say a copy of the previous
 * build's), the runs alternate between them in one process, so that both see the same state
 * of the machine; the median of each is reported. A measurement, not a test: it never fails
 * on a figure.
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { median } from './stats.js';

interface RedactorModule {
  createRedactor(): { redact(value: unknown): unknown };
}

interface Case {
  name: string;
  /** Redacted in turn, one call each; the figure is per call. */
  values: readonly unknown[];
}

const PROSE =
  'The build fails on Node 22 since the upgrade of the test runner: the worker pool starts before the ' +
  'environment is set, so process.env.DATABASE_URL is read as undefined and the first suite times out. ';
const CODE =
  'export async function loadConfig(path: string): Promise<Config> {\n' +
  "  const text = await readFile(path, 'utf8');\n" +
  '  const parsed = parse(text) as Partial<Config>;\n' +
  '  return { ...DEFAULTS, ...parsed, source: path };\n}\n\n';

/** Markdown with code, as a file tool writes or a fetch tool returns: 8 KiB, no secret in it. */
function largeText(bytes: number): string {
  let text = '# Notes on the release\n\n';
  for (let i = 0; text.length < bytes; i++) text += `## Step ${i}\n\n${PROSE}\n\n\`\`\`ts\n${CODE}\`\`\`\n\n`;
  return text.slice(0, bytes);
}

/** Small objects of a few strings, like most tools/call arguments; none holds a secret. */
const TYPICAL_ARGUMENTS: readonly unknown[] = [
  { path: '/home/ada/projects/switchboard/src/main.ts' },
  { query: 'SELECT id, name, created_at FROM users WHERE created_at > now() - interval 1 day', limit: 50 },
  { owner: 'octocat', repo: 'hello-world', title: 'Fix the build on Node 22', body: PROSE, labels: ['bug', 'ci'] },
  { url: 'https://example.com/docs/getting-started?lang=en&page=2', method: 'GET' },
  { command: 'npm run build && npm test -- --reporter=dot', cwd: '/work/app', timeoutMs: 60000 },
  { name: 'search_issues', arguments: { q: 'is:open label:bug sort:updated', per_page: 20 } },
];

// Through JSON text, as arguments reach the daemon: flat strings, not the ropes that `+=` builds.
const CASES: readonly Case[] = [
  { name: 'typical arguments (6 small objects)', values: fromJson(TYPICAL_ARGUMENTS) },
  { name: '8 KiB text ({path, content})', values: fromJson([{ path: 'docs/notes.md', content: largeText(8192) }]) },
  // A long run of token characters that is no secret: what a lockfile or a commit id brings.
  {
    name: 'a 64-digit digest (small object)',
    values: fromJson([{ file: 'package-lock.json', sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' }]),
  },
  // An exec tool's argv naming a command whose flags the patterns know: also read as one line.
  { name: 'an argv command (small object)', values: fromJson([{ command: ['npm', 'run', 'build', '--', '--reporter=dot'], cwd: '/work/app' }]) },
];

function fromJson(values: readonly unknown[]): unknown[] {
  return JSON.parse(JSON.stringify(values)) as unknown[];
}

/** Calls per timed run: enough that a run lasts well over the timer's resolution. */
const CALLS_PER_RUN: Record<string, number> = {
  [CASES[0].name]: 60_000,
  [CASES[1].name]: 2_000,
  [CASES[2].name]: 100_000,
  [CASES[3].name]: 100_000,
};

let sink = 0;

function timeRun(redact: (value: unknown) => unknown, values: readonly unknown[], calls: number): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    const out = redact(values[i % values.length]);
    if (out !== values[i % values.length]) sink++;
  }
  return Number(process.hrtime.bigint() - started) / calls;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { runs: { type: 'string', default: '15' }, module: { type: 'string', multiple: true } },
  });
  const runs = Number(values.runs);
  const paths = values.module ?? [];
  const modules: { label: string; redact: (value: unknown) => unknown }[] = [];
  if (paths.length === 0) {
    const audit = (await import('@switchboard/audit')) as RedactorModule;
    modules.push({ label: '@switchboard/audit', redact: bindRedact(audit) });
  }
  for (const path of paths) {
    const loaded = (await import(pathToFileURL(path).href)) as RedactorModule;
    modules.push({ label: path, redact: bindRedact(loaded) });
  }

  process.stdout.write(`node ${process.version}, ${runs} runs per case and module, ns per redact() call\n`);
  for (const benchCase of CASES) {
    const calls = CALLS_PER_RUN[benchCase.name];
    // Warm-up: every module compiled and optimized before any run counts.
    for (const module of modules) timeRun(module.redact, benchCase.values, calls);
    const figures = modules.map(() => [] as number[]);
    for (let run = 0; run < runs; run++) {
      for (let m = 0; m < modules.length; m++) figures[m].push(timeRun(modules[m].redact, benchCase.values, calls));
    }
    process.stdout.write(`${benchCase.name}\n`);
    modules.forEach((module, m) => {
      const sorted = [...figures[m]].sort((a, b) => a - b);
      const spread = `${sorted[0].toFixed(0)}-${sorted[sorted.length - 1].toFixed(0)}`;
      process.stdout.write(`  ${median(figures[m]).toFixed(0).padStart(8)} ns median (${spread})  ${module.label}\n`);
    });
  }
  // None of the inputs holds a secret: a call that changed one is a false positive to look at.
  process.stdout.write(`calls that redacted something: ${sink} (0 expected)\n`);
}

function bindRedact(module: RedactorModule): (value: unknown) => unknown {
  const redactor = module.createRedactor();
  return (value) => redactor.redact(value);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
