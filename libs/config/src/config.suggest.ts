import type { z } from 'zod';

/*
 * "Did you mean" for unknown keys. A misspelt key (`prot:`, `timeout:`, `mdoe:`) is only a
 * warning, and the setting it meant silently keeps its default, so the warning names the
 * known key it most likely meant.
 */

/** Wrappers that hold the schema the input is checked against (defaults, optionals, pipes). */
const INNER: Record<string, (def: Record<string, unknown>) => unknown> = {
  optional: (def) => def.innerType,
  nullable: (def) => def.innerType,
  default: (def) => def.innerType,
  prefault: (def) => def.innerType,
  readonly: (def) => def.innerType,
  catch: (def) => def.innerType,
  nonoptional: (def) => def.innerType,
  pipe: (def) => def.in,
};

function defOf(schema: unknown): Record<string, unknown> | undefined {
  return (schema as { _zod?: { def?: Record<string, unknown> } } | undefined)?._zod?.def;
}

function unwrap(schema: unknown): Record<string, unknown> | undefined {
  let def = defOf(schema);
  for (let hops = 0; def && INNER[def.type as string] && hops < 16; hops++) def = defOf(INNER[def.type as string]!(def));
  return def;
}

/** The keys an object of the schema at `path` accepts; [] where the path leads to no object. */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let def = unwrap(schema);
  for (const segment of path) {
    if (!def) return [];
    if (def.type === 'object') def = unwrap((def.shape as Record<string, unknown>)[String(segment)]);
    else if (def.type === 'record') def = unwrap(def.valueType);
    else if (def.type === 'array') def = unwrap(def.element);
    else return [];
  }
  return def?.type === 'object' ? Object.keys(def.shape as object) : [];
}

/**
 * Optimal string alignment distance: Levenshtein plus the swap of two neighbours as one edit,
 * since `mdoe` for `mode` is the commonest typo of all.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known key `key` was most likely meant to be (also used for other names, such as a
 * policy's roles): one that differs only in case, or by at most 2 edits; 1 for keys of up to
 * 4 characters, where 2 edits reach unrelated keys (VS Code's own `dev` is two from `env`).
 * Ties go to the key the schema lists first.
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const limit = key.length <= 4 ? 1 : 2;
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

/** The warning for an unknown key, with the hint when a known key at its level is close. */
export function unknownKeyReason(key: string, known: readonly string[]): string {
  const meant = closestKey(key, known);
  return meant ? `unknown key, ignored (did you mean \`${meant}\`?)` : 'unknown key, ignored';
}
