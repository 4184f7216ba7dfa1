import type { CatalogStore } from '@switchboard/catalog';
import { linearPatternEngine, PatternBudgetSpent, type PatternMeter } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import type { Item } from '../relay.types.js';
import type { OutputCheck } from './result-problems.js';

type Engine = typeof import('@modelcontextprotocol/client/validators/ajv');
type SchemaValidator = InstanceType<Engine['AjvJsonSchemaValidator']>;

/**
 * A schema longer than this (as JSON) is not compiled. ajv's compile time grows faster than
 * the schema (its code generation), one compile cannot be interrupted, and it holds the event
 * loop: measured here, 60,000 characters of properties took 1.3 s in one compile, 65,536 of
 * patternProperties 3.7 s with the stock validator; 16,000 characters took at most 0.13 s through
 * this class, and the slowest shape found (prefixItems and unevaluatedItems) 0.4 s on the stock
 * validator on a loaded machine. So one read spends OUTPUT_SCHEMAS_BUDGET_MS and at most one
 * such compile more.
 */
export const MAX_OUTPUT_SCHEMA_CHARS = 16 * 1024;
/**
 * What one upstream may spend compiling at once: checked before each schema, so the schemas
 * after it are not checked, and the one under way when it runs out ends first.
 */
export const OUTPUT_SCHEMAS_BUDGET_MS = 500;
/**
 * How fast an upstream's compile time comes back: OUTPUT_SCHEMAS_BUDGET_MS in this long. Each
 * list_changed is a read, and re-reads follow one another as fast as the upstream answers: one
 * whose schemas differ at every read would otherwise have the daemon compiling nearly all the
 * time. So over time an upstream's compiles hold the loop at most 5% of it.
 */
export const OUTPUT_SCHEMAS_REFILL_MS = 10_000;
/**
 * The steps (pattern-matcher.ts) the `pattern` checks of one result may take, over all its
 * strings: some 15 to 40 ms on this project's machines. A result that needs more passes with
 * its structuredContent unchecked, and a warning: 10,000 strings of 20 characters against
 * patterns of five states in use at a time come to about this.
 */
export const PATTERN_STEPS_PER_RESULT = 1_000_000;
/** An ajv message cut to this, for the host's error and the audit row. */
const MAX_MISMATCH_CHARS = 300;

interface ServerChecks {
  /** The snapshot's tools list these were compiled from: a new list (a re-read) is compiled again. */
  tools: readonly Item[];
  /** The upstream's own tool name -> its check; absent for a tool without an outputSchema. */
  byName: Map<string, OutputCheck>;
  /** The served tools' names and outputSchemas as JSON: a re-read that lists the same keeps these checks. */
  schemas: string;
  /** Whether no schema was left for want of compile time: else a re-read compiles again, once it has all its time. */
  complete: boolean;
}

/** An upstream's compile time left (ms, below zero when the last compile overran it), as of `at`. */
interface CompileTime {
  left: number;
  at: number;
}

/**
 * Each tool's outputSchema compiled once, when its upstream's tools list is read, so that a
 * call's structuredContent is checked at the cost of running the compiled check. The
 * validator is the MCP SDK's own (ajv, its options and its dialect choice by `$schema`), so
 * the gateway rejects what an SDK host would reject, and no more. Each read gets its own
 * validator: ajv keeps every schema it compiled (and refuses a second `$id`), so one shared
 * engine would grow with every re-read and let one upstream's `$id` stand for another's.
 * The SDK's validator (about 4 MB) is loaded only once some tool declares an outputSchema.
 *
 * Its `pattern`s (also those of `patternProperties` and `propertyNames`) are not run by
 * JavaScript's backtracking engine but by the gateway's own (pattern-program.ts), in time linear
 * in the string, within PATTERN_STEPS_PER_RESULT a result: they come from an upstream, and
 * ^\d*\d*\d*\d*\d*x$ against 200 digits held the daemon's one thread, every host's
 * requests, for seconds. A pattern that engine does not take (a backreference, a lookaround)
 * leaves its tool's schema uncompiled, as if it declared none.
 */
export class OutputSchemas {
  private readonly checks = new Map<string, ServerChecks>();
  private readonly compileTime = new Map<string, CompileTime>();
  private engine: Engine | undefined;
  /** What the result being checked may still spend on patterns: set before each check. */
  private readonly meter: PatternMeter = { stepsLeft: 0 };
  private loading: Promise<void> | undefined;

  constructor(
    private readonly store: CatalogStore,
    private readonly logger: Logger,
    /** Milliseconds, for the compile time; the specs give their own. */
    private readonly now: () => number = () => performance.now(),
  ) {
    store.onChange(() => this.refresh());
    this.refresh();
  }

  /** While the validator loads: resolves once the lists read so far are compiled. */
  get pending(): Promise<void> | undefined {
    return this.loading;
  }

  /** The check of `server`'s tool `name` (its own name); undefined when it declared no usable outputSchema. */
  checkOf(server: string, name: string): OutputCheck | undefined {
    return this.checks.get(server)?.byName.get(name);
  }

  private refresh(): void {
    for (const server of [...this.checks.keys()]) {
      if (this.store.snapshot(server)) continue;
      this.checks.delete(server);
      this.compileTime.delete(server);
    }
    for (const server of this.store.servers()) {
      const tools = this.store.snapshot(server)!.tools;
      const previous = this.checks.get(server);
      if (previous?.tools === tools) continue;
      const served = servedSchemas(tools);
      if (served.length === 0) this.checks.set(server, { tools, byName: new Map(), schemas: '', complete: true });
      else if (this.engine) {
        const schemas = schemasKey(served);
        // The same schemas: what was compiled stands; what was left for want of time is tried again once the time is back in full.
        if (previous?.schemas === schemas && (previous.complete || this.allowanceOf(server, this.now()) < OUTPUT_SCHEMAS_BUDGET_MS)) {
          this.checks.set(server, { ...previous, tools });
        } else this.checks.set(server, { tools, schemas, ...this.compile(server, served, new this.engine.AjvJsonSchemaValidator()) });
      } else this.load();
    }
  }

  private load(): void {
    this.loading ??= import('@modelcontextprotocol/client/validators/ajv').then(
      (engine) => {
        this.engine = engine;
        this.loading = undefined;
        this.refresh();
      },
      (err: unknown) => {
        this.loading = undefined;
        this.logger.error({ err: String(err) }, 'the JSON Schema validator could not be loaded; structuredContent is not checked against outputSchema');
      },
    );
  }

  private compile(server: string, served: readonly ServedSchema[], validator: SchemaValidator): Pick<ServerChecks, 'byName' | 'complete'> {
    const byName = new Map<string, OutputCheck>();
    const unchecked: string[] = [];
    let complete = true;
    const started = this.now();
    const allowance = this.allowanceOf(server, started);
    const patterns = linearPatternEngine(this.meter);
    for (const { name, schema, json } of served) {
      if (this.now() - started >= allowance) {
        complete = false;
        unchecked.push(`${JSON.stringify(name.slice(0, 80))}: the upstream's compile time (${OUTPUT_SCHEMAS_BUDGET_MS} ms, back over ${OUTPUT_SCHEMAS_REFILL_MS / 1000} s) was spent`);
        continue;
      }
      const why = uncompilable(json);
      if (why !== undefined) {
        unchecked.push(`${JSON.stringify(name.slice(0, 80))}: ${why}`);
        continue;
      }
      try {
        ajvOf(validator, schema).opts.code.regExp = patterns;
        const validate = validator.getValidator(schema as Parameters<SchemaValidator['getValidator']>[0]);
        byName.set(name, (value) => this.check(server, name, validate, value));
      } catch (err) {
        unchecked.push(`${JSON.stringify(name.slice(0, 80))}: ${(err instanceof Error ? err.message : String(err)).slice(0, 200)}`);
      }
    }
    const ended = this.now();
    this.compileTime.set(server, { left: allowance - (ended - started), at: ended });
    if (unchecked.length > 0) {
      this.logger.warn(
        { upstream: server, count: unchecked.length, examples: unchecked.slice(0, 5) },
        `${unchecked.length} tools' outputSchema could not be compiled; their structuredContent is checked as if they declared none`,
      );
    }
    return { byName, complete };
  }

  /** What `server` may spend compiling now: up to OUTPUT_SCHEMAS_BUDGET_MS, refilled over OUTPUT_SCHEMAS_REFILL_MS. */
  private allowanceOf(server: string, now: number): number {
    const time = this.compileTime.get(server);
    if (!time) return OUTPUT_SCHEMAS_BUDGET_MS;
    return Math.min(OUTPUT_SCHEMAS_BUDGET_MS, time.left + ((now - time.at) * OUTPUT_SCHEMAS_BUDGET_MS) / OUTPUT_SCHEMAS_REFILL_MS);
  }

  private check(server: string, tool: string, validate: ReturnType<SchemaValidator['getValidator']>, value: unknown): string | undefined {
    this.meter.stepsLeft = PATTERN_STEPS_PER_RESULT;
    try {
      const verdict = validate(value);
      return verdict.valid ? undefined : (verdict.errorMessage ?? 'invalid').slice(0, MAX_MISMATCH_CHARS);
    } catch (err) {
      if (!(err instanceof PatternBudgetSpent)) throw err;
      this.logger.warn(
        { upstream: server, tool: tool.slice(0, 80), steps: PATTERN_STEPS_PER_RESULT },
        "a result's structuredContent passed unchecked: its outputSchema's patterns would take more steps than one result may spend",
      );
      return undefined;
    }
  }
}

/** A served tool's outputSchema, with its JSON (stringified once a read: it is both the read's key and the schema's size). */
interface ServedSchema {
  name: string;
  schema: unknown;
  json: string;
}

/** Each served tool's (the first of its name's) outputSchema, by its name. */
function servedSchemas(tools: readonly Item[]): ServedSchema[] {
  const seen = new Set<unknown>();
  const served: ServedSchema[] = [];
  for (const tool of tools) {
    // The first item of a name is the one the catalog serves.
    if (seen.has(tool.name)) continue;
    seen.add(tool.name);
    if (tool.outputSchema !== undefined) served.push({ name: String(tool.name), schema: tool.outputSchema, json: JSON.stringify(tool.outputSchema) });
  }
  return served;
}

const uncompilable = (json: string): string | undefined =>
  json.length > MAX_OUTPUT_SCHEMA_CHARS ? `${json.length} characters of JSON, over ${MAX_OUTPUT_SCHEMA_CHARS}` : undefined;

/** What a re-read compares to know its schemas are the same: every name with its schema's JSON, in order. */
const schemasKey = (served: readonly ServedSchema[]): string => served.map(({ name, json }) => `${JSON.stringify(name)}:${json}`).join(',');

/** The part of an ajv engine this sets: the regular expression engine its next compile uses for `pattern`s. */
interface AjvEngine {
  opts: { code: { regExp: unknown } };
}

/**
 * The ajv engine the SDK's validator compiles `schema` with. The SDK picks it by the schema's
 * `$schema` (2020-12, 2019-09, draft-07) and makes it, with its options, on first use, and none
 * of that is public API; rather than copy that choice here, this asks the validator's own
 * `_engineFor`. Should an SDK update take it away, every schema fails to compile (unchecked,
 * with a warning) instead of being checked by the backtracking engine, and the specs fail.
 */
function ajvOf(validator: SchemaValidator, schema: unknown): AjvEngine {
  const pick = (validator as unknown as { _engineFor?: (schema: unknown) => Partial<AjvEngine> })._engineFor;
  const engine = typeof pick === 'function' ? pick.call(validator, schema) : undefined;
  if (typeof engine?.opts?.code !== 'object') throw new Error("this MCP SDK's validator does not let the gateway choose how patterns are matched");
  return engine as AjvEngine;
}
