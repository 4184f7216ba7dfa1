/* Moved from libs/audit so that the audit log (arguments) and tool pinning (definitions) share one canonical form. */

/**
 * JSON text with object keys sorted recursively (by UTF-16 code units; arrays keep their
 * order), so that equal values give equal text whatever order their members were built in.
 * Otherwise it writes what JSON.stringify writes: toJSON() is honoured, undefined, functions
 * and symbols are dropped from objects and become null in arrays, non-finite numbers become
 * null. For plain JSON data that is the RFC 8785 (JCS) form.
 *
 * Two differences, so that the audit path does not fail on what JSON.stringify rejects or
 * loses: a bigint is written as its digits (a valid JSON number), and a top-level value JSON
 * cannot represent gives 'null' rather than undefined. A cycle still throws a TypeError.
 */
export function canonicalJson(value: unknown): string {
  return write(value, '', 0, undefined) ?? 'null';
}

/**
 * Past this depth a value is written as a marker string instead of being walked: the audit
 * row of a request refused for its nesting (MAX_JSON_DEPTH) is still written, and a
 * recursive walk of thousands of levels would overflow the stack.
 */
const MAX_WRITE_DEPTH = 1000;
const TOO_DEEP = JSON.stringify('[nested too deeply]');
/**
 * Objects deeper than this are tracked to find cycles. Shallower ones are not: a cycle
 * repeats without end, so it is found below this depth all the same, and the arguments of
 * nearly every call (a level or two) cost no Set on the audit path.
 */
const TRACKED_FROM_DEPTH = 32;

/**
 * The JSON text of `value`, or undefined where JSON.stringify would leave a member out.
 * `ancestors` holds the tracked objects on the path to `value` (see TRACKED_FROM_DEPTH).
 */
function write(value: unknown, key: string, depth: number, ancestors: Set<object> | undefined): string | undefined {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object': {
      if (value === null) return 'null';
      if (depth >= MAX_WRITE_DEPTH) return TOO_DEEP;
      if (depth < TRACKED_FROM_DEPTH) return writeContainer(value, depth, ancestors);
      if (ancestors?.has(value)) throw new TypeError('canonicalJson: circular structure');
      const tracked = (ancestors ??= new Set()).add(value);
      try {
        return writeContainer(value, depth, tracked);
      } finally {
        tracked.delete(value);
      }
    }
    default:
      return undefined;
  }
}

function writeContainer(value: object, depth: number, ancestors: Set<object> | undefined): string {
  return Array.isArray(value) ? writeArray(value, depth + 1, ancestors) : writeObject(value as Record<string, unknown>, depth + 1, ancestors);
}

function writeArray(array: unknown[], depth: number, ancestors: Set<object> | undefined): string {
  let out = '[';
  for (let i = 0; i < array.length; i++) {
    if (i > 0) out += ',';
    out += write(array[i], String(i), depth, ancestors) ?? 'null';
  }
  return `${out}]`;
}

function writeObject(record: Record<string, unknown>, depth: number, ancestors: Set<object> | undefined): string {
  let out = '{';
  for (const key of Object.keys(record).sort()) {
    const text = write(record[key], key, depth, ancestors);
    if (text === undefined) continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(key)}:${text}`;
  }
  return `${out}}`;
}
