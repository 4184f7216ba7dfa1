/** Exponential backoff with ±20% jitter, so many upstreams that failed together spread out. */
export function backoffDelay(attempt: number, baseMs = 250, maxMs = 30_000, random = Math.random): number {
  const raw = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 20));
  return Math.round(raw * (0.8 + 0.4 * random()));
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
