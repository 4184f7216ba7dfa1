import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Beside the database, readable by the service account only. */
export const DIGEST_KEY_FILE = 'audit-digest.key';

/**
 * The key of the arguments digest: 32 random bytes, created on first use. Several processes
 * may start on one data dir at once (a daemon and the `switchboard stdio` instances hosts
 * launch): the key is written to a private temporary file and then hard-linked into place,
 * which fails if another process got there first. So the file appears whole or not at all,
 * and everyone reads the same key. Losing the file only means older digests can no longer
 * be recomputed.
 */
export function loadDigestKey(dataDir: string): Buffer {
  const file = join(dataDir, DIGEST_KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  if (!existsSync(file)) {
    const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(draft, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(draft, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(draft);
    }
  }
  return readDigestKey(dataDir);
}

/** The existing key; throws when there is none (no daemon has started on this data dir). */
export function readDigestKey(dataDir: string): Buffer {
  const text = readFileSync(join(dataDir, DIGEST_KEY_FILE), 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${join(dataDir, DIGEST_KEY_FILE)} is not a 64-digit hex key`);
  return Buffer.from(text, 'hex');
}
