/**
 * How deeply JSON values may nest in what hosts send. MCP's own messages nest a few levels;
 * tool arguments rarely a dozen. Far deeper values (thousands of levels) overflow the stack
 * of every recursive walk on the way: canonical JSON for the audit digest, redaction, the
 * encoder that forwards them.
 */
export const MAX_JSON_DEPTH = 256;

/** Whether `value` nests objects or arrays more than `max` levels deep. Iterative: any depth is safe to ask about. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
