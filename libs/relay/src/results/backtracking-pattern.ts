type Item = Record<string, unknown>;

/**
 * Whether a regular expression may take exponential time in JavaScript's backtracking
 * engine: a repeated group that itself repeats or alternates (`(a+)+`, `(a|aa)*`, `(\w+\s?)*`)
 * or a backreference. A judgement of the source's form, not of its meaning, so it errs on
 * the safe side: a harmless `(?:[a-z]+\.)+` is also taken for one.
 */
export function mayBacktrackBadly(source: string): boolean {
  /** For each group open at this point: whether it repeats or alternates inside. */
  const groups: boolean[] = [];
  const markOpenGroup = () => {
    if (groups.length > 0) groups[groups.length - 1] = true;
  };
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      if (!inClass && ((next >= '1' && next <= '9') || next === 'k')) return true;
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
    } else if (c === '(') {
      groups.push(false);
      // (?:, (?=, (?<name>: the ? is no quantifier.
      if (source[i + 1] === '?') i++;
    } else if (c === ')') {
      const repeatsInside = groups.pop() ?? false;
      const next = source[i + 1];
      const repeated = next === '*' || next === '+' || next === '{';
      if (repeatsInside && repeated) return true;
      if (repeatsInside || repeated) markOpenGroup();
    } else if (c === '*' || c === '+' || c === '?' || c === '{' || c === '|') {
      markOpenGroup();
    }
  }
  return false;
}

/** The first regular expression in a JSON Schema (a `pattern`, a `patternProperties` key) that mayBacktrackBadly. */
export function backtrackingPatternIn(schema: unknown): string | undefined {
  if (Array.isArray(schema)) {
    for (const item of schema) {
      const found = backtrackingPatternIn(item);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof schema !== 'object' || schema === null) return undefined;
  for (const [key, value] of Object.entries(schema as Item)) {
    if (key === 'pattern' && typeof value === 'string' && mayBacktrackBadly(value)) return value;
    if (key === 'patternProperties' && typeof value === 'object' && value !== null) {
      const found = Object.keys(value).find(mayBacktrackBadly);
      if (found !== undefined) return found;
    }
    const found = backtrackingPatternIn(value);
    if (found !== undefined) return found;
  }
  return undefined;
}
