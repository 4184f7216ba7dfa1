type Item = Record<string, unknown>;

const STRING_FORMATS = new Set(['email', 'uri', 'date', 'date-time']);

/**
 * Checks a form elicitation's `requestedSchema` against the spec's restricted subset: a flat
 * object whose properties are strings (optionally with a format or length bounds), numbers,
 * integers, booleans, single-choice enums or multi-choice arrays of enums. Hosts render
 * forms from it, and one they cannot render should fail here, at the gateway, with the
 * reasons, rather than as a blank form in front of a user. Returns the problems found.
 */
export function elicitationSchemaProblems(schema: unknown): string[] {
  if (!isItem(schema)) return ['requestedSchema must be an object'];
  const problems: string[] = [];
  if (schema.type !== 'object') problems.push("requestedSchema.type must be 'object'");
  const properties = schema.properties;
  if (!isItem(properties)) return [...problems, 'requestedSchema.properties must be an object'];
  for (const [name, property] of Object.entries(properties)) problems.push(...propertyProblems(`properties.${name}`, property));
  if (schema.required !== undefined) {
    const required = schema.required;
    if (!Array.isArray(required) || !required.every((r) => typeof r === 'string' && Object.hasOwn(properties, r))) {
      problems.push('requestedSchema.required must list names of properties');
    }
  }
  return problems;
}

function propertyProblems(at: string, p: unknown): string[] {
  if (!isItem(p)) return [`${at} must be an object`];
  switch (p.type) {
    case 'string':
      if (p.enum !== undefined) return isStringList(p.enum) ? [] : [`${at}.enum must be a list of strings`];
      if (p.oneOf !== undefined) return constOptions(`${at}.oneOf`, p.oneOf);
      if (p.format !== undefined && !STRING_FORMATS.has(String(p.format))) return [`${at}.format must be one of email, uri, date, date-time`];
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

const isItem = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringList = (v: unknown): boolean => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string');
