import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Beside the database, readable by the service account only. */
export const DIGEST_KEY_FILE = 'audit-digest.key';
/** Beside the database; losing it makes every stored upstream secret unreadable. */
export const SECRETS_KEY_FILE = 'upstream-secrets.key';

/**
 * A key of 32 random bytes in the data dir, created on first use. Several processes may
 * start on one data dir at once (a daemon and the `switchboard stdio` instances hosts
 * launch): the key is written to a private temporary file and then hard-linked into place,
 * which fails if another process got there first. So the file appears whole or not at all,
 * and everyone reads the same key.
 */
export function loadKeyFile(dataDir: string, fileName: string): Buffer {
  const file = join(dataDir, fileName);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
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
  return readKeyFile(dataDir, fileName);
}

/** The existing key; throws when there is none. */
export function readKeyFile(dataDir: string, fileName: string): Buffer {
  const file = join(dataDir, fileName);
  const text = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${file} is not a 64-digit hex key`);
  return Buffer.from(text, 'hex');
}

/** The arguments digest's key. Losing it only means older digests can no longer be recomputed. */
export const loadDigestKey = (dataDir: string): Buffer => loadKeyFile(dataDir, DIGEST_KEY_FILE);

/** Throws when there is none (no daemon has started on this data dir). */
export const readDigestKey = (dataDir: string): Buffer => readKeyFile(dataDir, DIGEST_KEY_FILE);

/** The key that seals upstream secrets per principal (`switchboard secrets`). */
export const loadSecretsKey = (dataDir: string): Buffer => loadKeyFile(dataDir, SECRETS_KEY_FILE);
