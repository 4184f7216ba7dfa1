import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Beside the database, readable by the service account only. */
export const DIGEST_KEY_FILE = 'audit-digest.key';

/**
 * The key of the arguments digest: 32 random bytes, created on first use. Created with
 * O_EXCL, so two processes starting on one data dir agree on one key (the loser reads the
 * winner's). Losing the file only means older digests can no longer be recomputed.
 */
export function loadDigestKey(dataDir: string): Buffer {
  const file = join(dataDir, DIGEST_KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  try {
    const fd = openSync(file, 'wx', 0o600);
    try {
      writeSync(fd, `${randomBytes(32).toString('hex')}\n`);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readDigestKey(dataDir);
}

/** The existing key; throws when there is none (no daemon has started on this data dir). */
export function readDigestKey(dataDir: string): Buffer {
  const text = readFileSync(join(dataDir, DIGEST_KEY_FILE), 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${join(dataDir, DIGEST_KEY_FILE)} is not a 64-digit hex key`);
  return Buffer.from(text, 'hex');
}
