import { createHash } from 'node:crypto';
import type { SqliteConnection, SqliteStatement } from '@switchboard/persistence';
import { SecretCipher } from './secret-cipher.js';
import { checkPrincipal, checkSecretName, checkSecretValue } from './secret-rules.js';
import { SecretError, SecretErrorCode } from './secrets.errors.js';

/** What `list` shows: never the value. */
export interface PrincipalSecretInfo {
  principal: string;
  name: string;
  updatedAt: number;
}

interface SealedRow {
  name: string;
  value: Buffer;
}

/**
 * The `principal_secret` table through prepared statements: `switchboard secrets` writes it,
 * and the daemon reads a principal's values when it starts that principal's upstream. Values
 * are sealed with the key the caller loads from the data dir, so the database file alone
 * (a backup, a copied file) does not reveal them.
 */
export class PrincipalSecretStore {
  private sealing?: SecretCipher;
  private readonly loadKey?: () => Buffer;
  private readonly upsert: SqliteStatement;
  private readonly remove: SqliteStatement;
  private readonly listAll: SqliteStatement;
  private readonly listOne: SqliteStatement;
  private readonly sealedFor: SqliteStatement;
  private readonly holders: SqliteStatement;
  private readonly everyHolder: SqliteStatement;
  private readonly versions: SqliteStatement;

  /**
   * `key` as a function is loaded when a value is first sealed or opened: listing and
   * deleting need no key, and must not create the key file (`switchboard secrets list`).
   */
  constructor(db: SqliteConnection, key: Buffer | (() => Buffer)) {
    if (typeof key === 'function') this.loadKey = key;
    else this.sealing = new SecretCipher(key);
    this.upsert = db.prepare(`INSERT OR REPLACE INTO principal_secret (principal, name, value, updated_at) VALUES (?, ?, ?, ?)`);
    this.remove = db.prepare(`DELETE FROM principal_secret WHERE principal = ? AND name = ?`);
    const info = `SELECT principal, name, updated_at AS updatedAt FROM principal_secret`;
    this.listAll = db.prepare(`${info} ORDER BY principal, name`);
    this.listOne = db.prepare(`${info} WHERE principal = ? ORDER BY name`);
    this.sealedFor = db.prepare(`SELECT name, value FROM principal_secret WHERE principal = ?`);
    // The names arrive as one JSON array so a single prepared statement serves any number of them.
    this.holders = db.prepare(
      `SELECT principal FROM principal_secret WHERE name IN (SELECT value FROM json_each(?))
       GROUP BY principal HAVING COUNT(*) = ? ORDER BY principal`,
    );
    this.everyHolder = db.prepare(`SELECT DISTINCT principal FROM principal_secret ORDER BY principal`);
    // The IV is fresh on every set, so a value replaced within the same millisecond still shows.
    this.versions = db.prepare(`SELECT principal, name, updated_at AS updatedAt, substr(value, 1, 12) AS iv FROM principal_secret ORDER BY principal, name`);
  }

  private get cipher(): SecretCipher {
    return (this.sealing ??= new SecretCipher(this.loadKey!()));
  }

  /** Stores or replaces a value. */
  set(written: string, name: string, value: string): void {
    const principal = checkPrincipal(written);
    checkSecretName(name);
    checkSecretValue(name, value);
    this.upsert.run(principal, name, this.cipher.seal(principal, name, value), Date.now());
  }

  /** False when there was no such secret. */
  delete(written: string, name: string): boolean {
    const principal = checkPrincipal(written);
    checkSecretName(name);
    return this.remove.run(principal, name).changes > 0;
  }

  /** Every secret, or one principal's, by principal then name; no values. */
  list(principal?: string): PrincipalSecretInfo[] {
    return (principal === undefined ? this.listAll.all() : this.listOne.all(checkPrincipal(principal))) as PrincipalSecretInfo[];
  }

  /** A principal's values by name, decrypted; empty when it has none. */
  valuesFor(principal: string): Record<string, string> {
    const values: Record<string, string> = {};
    for (const row of this.sealedFor.all(principal) as SealedRow[]) {
      const value = this.cipher.open(principal, row.name, row.value);
      if (value === undefined) {
        throw new SecretError(
          SecretErrorCode.Undecryptable,
          `secret ${row.name} of principal '${principal}' cannot be decrypted: the secrets key is not the one it was set with ` +
            `(key file replaced or lost), or the row was altered; set it again`,
        );
      }
      values[row.name] = value;
    }
    return values;
  }

  /** Principals that have every one of the names, sorted; with no names, every principal that has a secret. */
  principalsWith(names: string[]): string[] {
    const wanted = [...new Set(names)];
    wanted.forEach(checkSecretName);
    const rows = (wanted.length === 0 ? this.everyHolder.all() : this.holders.all(JSON.stringify(wanted), wanted.length)) as { principal: string }[];
    return rows.map((r) => r.principal);
  }

  /** Changes whenever a row is added, replaced or deleted; cheap enough to poll from another process. */
  fingerprint(): string {
    const hash = createHash('sha256');
    for (const row of this.versions.iterate() as Iterable<PrincipalSecretInfo & { iv: Buffer }>) {
      hash.update(JSON.stringify([row.principal, row.name, row.updatedAt])).update(row.iv);
    }
    return hash.digest('hex');
  }
}
