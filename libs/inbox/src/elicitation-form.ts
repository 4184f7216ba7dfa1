import { FormPatterns, PATTERN_INPUT_LIMIT, PATTERN_STEPS_PER_FORM } from './string-pattern.js';

type Item = Record<string, unknown>;

const STRING_FORMATS = new Set(['email', 'uri', 'date', 'date-time']);

/**
 * Checks a form elicitation's `requestedSchema` against the spec's restricted subset: a flat
 * object whose properties are strings (optionally with a format or length bounds), numbers,
 * integers, booleans, single-choice enums or multi-choice arrays of enums. A `pattern` must
 * compile as an ECMAScript regular expression with the `u` flag: one that does not is a
 * schema no form can check, refused here rather than ignored. One the gateway's linear-time
 * engine does not run (a backreference, a lookaround: string-pattern.ts) is asked, and its
 * answers are not matched against it here, never by a backtracking engine: such patterns
 * (a password rule's `(?=.*\d)`) are common, and the upstream checks its own schema. Hosts render
 * forms from it, and one they cannot render should fail here, at the gateway, with the
 * reasons, rather than as a blank form in front of a user. Returns the problems found.
 */
export function elicitationSchemaProblems(schema: unknown): string[] {
  if (!isItem(schema)) return ['requestedSchema must be an object'];
  const problems: string[] = [];
  const patterns = new FormPatterns();
  if (schema.type !== 'object') problems.push("requestedSchema.type must be 'object'");
  const properties = schema.properties;
  if (!isItem(properties)) return [...problems, 'requestedSchema.properties must be an object'];
  for (const [name, property] of Object.entries(properties)) problems.push(...propertyProblems(`properties.${name}`, property, patterns));
  if (schema.required !== undefined) {
    const required = schema.required;
    if (!Array.isArray(required) || !required.every((r) => typeof r === 'string' && Object.hasOwn(properties, r))) {
      problems.push('requestedSchema.required must list names of properties');
    }
  }
  return problems;
}

function propertyProblems(at: string, p: unknown, patterns: FormPatterns): string[] {
  if (!isItem(p)) return [`${at} must be an object`];
  switch (p.type) {
    case 'string':
      if (p.enum !== undefined) return isStringList(p.enum) ? [] : [`${at}.enum must be a list of strings`];
      if (p.oneOf !== undefined) return constOptions(`${at}.oneOf`, p.oneOf);
      if (p.format !== undefined && !STRING_FORMATS.has(String(p.format))) return [`${at}.format must be one of email, uri, date, date-time`];
      if (p.pattern !== undefined) {
        const pattern = patterns.compile(p.pattern);
        if ('unusable' in pattern && pattern.unusable === 'not a regular expression') return [`${at}.pattern must be a regular expression (ECMAScript, with the u flag)`];
      }
      return bounds(at, p, 'minLength', 'maxLength');
    case 'number':
    case 'integer':
      return bounds(at, p, 'minimum', 'maximum');
    case 'boolean':
      return [];
    case 'array': {
      const items = p.items;
      if (!isItem(items)) return [`${at}.items must be an object (a multi-select needs an enum)`];
      if (items.enum !== undefined) return isStringList(items.enum) ? [] : [`${at}.items.enum must be a list of strings`];
      if (items.anyOf !== undefined) return constOptions(`${at}.items.anyOf`, items.anyOf);
      return [`${at}.items must give the choices (enum or anyOf)`];
    }
    default:
      return [`${at}.type must be string, number, integer, boolean or array (nested objects are not allowed)`];
  }
}

function bounds(at: string, p: Item, low: string, high: string): string[] {
  const problems: string[] = [];
  for (const key of [low, high]) if (p[key] !== undefined && typeof p[key] !== 'number') problems.push(`${at}.${key} must be a number`);
  return problems;
}

function constOptions(at: string, options: unknown): string[] {
  const ok = Array.isArray(options) && options.every((o) => isItem(o) && typeof o.const === 'string');
  return ok ? [] : [`${at} must be a list of { const, title } choices`];
}

/**
 * Checks a user's answer to a form against the schema it was asked with (which passed
 * elicitationSchemaProblems): the inbox validates in the page for the user's sake and here
 * for the upstream's, since a page's checks are the browser's to skip. Returns the problems.
 */
export function elicitationContentProblems(schema: Item, content: unknown): string[] {
  if (!isItem(content)) return ['content must be an object'];
  const properties = schema.properties as Record<string, Item>;
  const required = (schema.required as string[] | undefined) ?? [];
  const problems: string[] = [];
  const patterns = new FormPatterns();
  for (const name of Object.keys(content)) if (!Object.hasOwn(properties, name)) problems.push(`${name} is not a field of this form`);
  for (const [name, p] of Object.entries(properties)) {
    const value = content[name];
    if (value === undefined) {
      if (required.includes(name)) problems.push(`${name} is required`);
      continue;
    }
    const problem = valueProblem(p, value, patterns);
    if (problem) problems.push(`${name} ${problem}`);
  }
  return problems;
}

function valueProblem(p: Item, value: unknown, patterns: FormPatterns): string | undefined {
  switch (p.type) {
    case 'string': {
      if (typeof value !== 'string') return 'must be text';
      const choices = choicesOf(p);
      if (choices) return choices.includes(value) ? undefined : `must be one of ${choices.join(', ')}`;
      if (typeof p.minLength === 'number' && value.length < p.minLength) return `must be at least ${p.minLength} characters`;
      if (typeof p.maxLength === 'number' && value.length > p.maxLength) return `must be at most ${p.maxLength} characters`;
      if (p.format !== undefined && !FORMAT_TESTS[String(p.format)]?.(value)) return `must be a valid ${String(p.format)}`;
      return p.pattern === undefined ? undefined : patternProblem(patterns, p.pattern, value);
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (p.type === 'integer' && !Number.isInteger(value)) return 'must be a whole number';
      if (typeof p.minimum === 'number' && value < p.minimum) return `must be at least ${p.minimum}`;
      if (typeof p.maximum === 'number' && value > p.maximum) return `must be at most ${p.maximum}`;
      return undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'array': {
      const choices = choicesOf(p.items as Item) ?? [];
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && choices.includes(v))) {
        return `must be a list of ${choices.join(', ')}`;
      }
      if (typeof p.minItems === 'number' && value.length < p.minItems) return `needs at least ${p.minItems} choices`;
      if (typeof p.maxItems === 'number' && value.length > p.maxItems) return `allows at most ${p.maxItems} choices`;
      return undefined;
    }
    default:
      return 'has a type this form does not support';
  }
}

function patternProblem(patterns: FormPatterns, source: unknown, value: string): string | undefined {
  const pattern = patterns.compile(source);
  if ('unusable' in pattern) {
    // Not one the gateway runs: left to the upstream, which checks its own schema, and to
    // the host or the inbox page, which check it as they render the form (ADR 011).
    return pattern.unusable === 'not linear' ? undefined : 'cannot be checked: its pattern must be a regular expression (ECMAScript, with the u flag)';
  }
  if (value.length > PATTERN_INPUT_LIMIT) return `must be at most ${PATTERN_INPUT_LIMIT} characters to be checked against its pattern`;
  const matches = patterns.matches(pattern, value);
  if (matches === undefined) return `could not be checked against its pattern within the ${PATTERN_STEPS_PER_FORM.toLocaleString('en')} steps one answer may take`;
  return matches ? undefined : `must match the pattern ${String(source)}`;
}

/** The allowed values of a single- or multi-choice field: `enum`, or the `const`s of `oneOf`/`anyOf`. */
export function choicesOf(p: Item): string[] | undefined {
  if (Array.isArray(p.enum)) return p.enum as string[];
  const options = (p.oneOf ?? p.anyOf) as Item[] | undefined;
  return Array.isArray(options) ? options.map((o) => String(o.const)) : undefined;
}

const FORMAT_TESTS: Record<string, (v: string) => boolean> = {
  email: (v) => /^[^\s@]+@[^\s@]+$/.test(v),
  uri: (v) => URL.canParse(v),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)),
  'date-time': (v) => /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v)),
};

const isItem = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringList = (v: unknown): boolean => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string');
