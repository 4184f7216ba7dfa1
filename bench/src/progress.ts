/** Progress lines on stderr, stamped with the time since the bench started (stdout carries only the report). */
const started = Date.now();

export function progress(message: string): void {
  const seconds = ((Date.now() - started) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[${seconds}s] ${message}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** list rotated left by k, so that a different item goes first in each slot. */
export function rotate<T>(list: readonly T[], k: number): T[] {
  if (list.length === 0) return [];
  const shift = ((k % list.length) + list.length) % list.length;
  return [...list.slice(shift), ...list.slice(0, shift)];
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
