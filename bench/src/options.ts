import { parseArgs } from 'node:util';
import { TARGET_NAMES, type TargetName } from './targets/target.js';

export interface BenchOptions {
  rounds: number;
  /**
   * Rounds of the audit scenario, each with freshly started daemons. More than the main
   * matrix: targets h and i are judged on a ratio of a few percent.
   */
  auditRounds: number;
  /** Measurement window per target x concurrency, seconds. */
  durationS: number;
  /** Unrecorded load before each window, seconds. */
  warmupS: number;
  concurrency: number[];
  targets: TargetName[];
  skipExtras: boolean;
  quick: boolean;
  /** Full tools/list walks in the merged-listing scenario. */
  listIterations: number;
  /** Sessions opened per target in the idle-sessions scenario. */
  idleSessions: number;
  /** Window per payload size x concurrency x target, seconds (one round). */
  payloadDurationS: number;
  /** Window per case of the in-process audit writer, seconds. */
  writerDurationS: number;
}

export const USAGE = `Usage: npm run bench -- [options]

Measures Switchboard against the bare bench upstream (direct-http, the baseline of
every ratio), the upstream over stdio, and mcp-proxy. Progress goes to stderr, the
report (markdown) to stdout and to .bench/latest.md and .bench/latest.json.

  --rounds N            interleaved rounds of the main matrix and the policy scenario (default 3)
  --audit-rounds N      rounds of the audit scenario, fresh daemons each (default 5)
  --duration SECONDS    measurement window per target and concurrency (default 3)
  --concurrency LIST    closed-loop workers, e.g. 1,16,64 (default); the payload and
                        audit scenarios keep their own levels (1 and 16)
  --targets LIST        subset of ${TARGET_NAMES.join(',')}; the audit
                        log's cost through the daemon needs switchboard-stdio
  --skip-extras         only the main matrix (no tools/list, payload, idle sessions, audit, policy)
  --quick               smoke run: 1 round, 1 s windows, fewer list walks and sessions
  --help                this text`;

const DEFAULTS: BenchOptions = {
  rounds: 3,
  auditRounds: 5,
  durationS: 3,
  warmupS: 1,
  concurrency: [1, 16, 64],
  targets: [...TARGET_NAMES],
  skipExtras: false,
  quick: false,
  listIterations: 200,
  idleSessions: 1000,
  payloadDurationS: 2,
  writerDurationS: 2,
};

const QUICK: Partial<BenchOptions> = {
  rounds: 1,
  auditRounds: 1,
  durationS: 1,
  warmupS: 0.5,
  listIterations: 40,
  idleSessions: 200,
  payloadDurationS: 0.5,
  writerDurationS: 1,
};

/** Parses the command line; 'help' when --help was given. Throws on bad input, with the reason. */
export function parseOptions(argv: readonly string[]): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      rounds: { type: 'string' },
      'audit-rounds': { type: 'string' },
      duration: { type: 'string' },
      concurrency: { type: 'string' },
      targets: { type: 'string' },
      'skip-extras': { type: 'boolean' },
      quick: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return 'help';
  // --quick sets the smoke-run defaults; explicit flags still win over them.
  const options: BenchOptions = { ...DEFAULTS, ...(values.quick ? QUICK : {}), quick: values.quick ?? false };
  if (values.rounds !== undefined) options.rounds = positiveInt('--rounds', values.rounds);
  if (values['audit-rounds'] !== undefined) options.auditRounds = positiveInt('--audit-rounds', values['audit-rounds']);
  if (values.duration !== undefined) {
    options.durationS = positiveNumber('--duration', values.duration);
    options.payloadDurationS = Math.min(options.payloadDurationS, options.durationS);
    options.writerDurationS = Math.min(options.writerDurationS, options.durationS);
  }
  if (values.concurrency !== undefined) {
    options.concurrency = list('--concurrency', values.concurrency).map((item) => positiveInt('--concurrency', item));
  }
  if (values.targets !== undefined) {
    options.targets = list('--targets', values.targets).map((item) => {
      if (!(TARGET_NAMES as readonly string[]).includes(item)) {
        throw new Error(`--targets: unknown target ${JSON.stringify(item)}; known: ${TARGET_NAMES.join(', ')}`);
      }
      return item as TargetName;
    });
  }
  options.skipExtras = values['skip-extras'] ?? false;
  return options;
}

function list(flag: string, raw: string): string[] {
  const items = [...new Set(raw.split(',').map((item) => item.trim()).filter((item) => item !== ''))];
  if (items.length === 0) throw new Error(`${flag} needs at least one value`);
  return items;
}

function positiveInt(flag: string, raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${flag} must be a positive integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

function positiveNumber(flag: string, raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw new Error(`${flag} must be a positive number of seconds, got ${JSON.stringify(raw)}`);
  }
  return value;
}
