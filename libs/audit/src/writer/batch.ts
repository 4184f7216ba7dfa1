import type { AuditEntry } from '../audit.types.js';

/** Rows that share one commit, and the promise strict-mode callers wait on. */
export interface Batch {
  promise: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
  entries: AuditEntry[];
}

export function newBatch(): Batch {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Relaxed callers never await it; a rejection with no listener must not crash the process.
  promise.catch(() => undefined);
  return { promise, resolve, reject, entries: [] };
}
