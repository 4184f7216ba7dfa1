import type { SqliteConnection, SqliteStatement } from '@switchboard/persistence';
import type { AuthPrincipal } from '../principal.js';
import { hashApiKey } from './key-material.js';

/**
 * Whose key a refused request carried, when a stored key matched (revoked, expired): the
 * audit row is then that key's, so an auditor who filters by it finds the attempts made with
 * it after it stopped serving. For the row only: it admits nobody.
 */
export interface RefusedKeyHolder {
  id: string;
  authMethod: 'api-key';
}

export type KeyVerdict =
  | { ok: true; principal: AuthPrincipal }
  | { ok: false; rule: 'auth:unknown-key' | 'auth:expired-key' | 'auth:revoked-key'; reason: string; told?: string; attributedTo?: RefusedKeyHolder };

interface KeyRow {
  id: number;
  name: string;
  roles: string;
  expiresAt: number | null;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

/** last_used_at is written at most this often per key: a write per request would cost every call. */
const LAST_USED_EVERY_MS = 60_000;

/**
 * Checks a presented key on every request: one indexed lookup by hash through a prepared
 * statement (synchronous, a few microseconds), so a key revoked by the CLI stops working on
 * the daemon's next request. The key's name is the principal.
 */
export class ApiKeyVerifier {
  private readonly lookup: SqliteStatement;
  private readonly byId: SqliteStatement;
  private readonly touch: SqliteStatement;
  /**
   * When this process last wrote each key's last_used_at, oldest first; an entry older than
   * LAST_USED_EVERY_MS says no more than the row does, so it goes (keys come and go: one
   * used once must not be held for the daemon's life).
   */
  private readonly touched = new Map<number, number>();

  constructor(
    db: SqliteConnection,
    private readonly now: () => number = Date.now,
  ) {
    this.lookup = db.prepare(
      `SELECT id, name, roles, expires_at AS expiresAt, revoked_at AS revokedAt, last_used_at AS lastUsedAt
       FROM api_key WHERE key_hash = ?`,
    );
    this.byId = db.prepare('SELECT name, revoked_at AS revokedAt, expires_at AS expiresAt FROM api_key WHERE id = ?');
    this.touch = db.prepare('UPDATE api_key SET last_used_at = ? WHERE id = ?');
  }

  /**
   * Why the key with this row id no longer serves (revoked, expired, deleted), or undefined
   * while it does: for what outlives the request the key was checked on. One lookup by
   * primary key through a prepared statement, as cheap as verify(): the credential check
   * asks it for every session opened with a key, every few seconds (libs/downstream).
   */
  lapseOf(keyId: number, now = this.now()): Extract<KeyVerdict, { ok: false }> | undefined {
    const row = this.byId.get(keyId) as Pick<KeyRow, 'name' | 'revokedAt' | 'expiresAt'> | undefined;
    if (!row) return { ok: false, rule: 'auth:unknown-key', reason: 'the API key was deleted' };
    return refusalOf(row, now);
  }

  verify(key: string): KeyVerdict {
    const row = this.lookup.get(hashApiKey(key)) as KeyRow | undefined;
    if (!row) return { ok: false, rule: 'auth:unknown-key', reason: 'unknown API key' };
    const now = this.now();
    const refused = refusalOf(row, now);
    if (refused) return refused;
    this.noteUse(row, now);
    const credential = row.expiresAt === null ? { keyId: row.id } : { keyId: row.id, expiresAt: row.expiresAt };
    return { ok: true, principal: { id: row.name, authMethod: 'api-key', roles: JSON.parse(row.roles) as string[], credential } };
  }

  /** For tests: how many keys' last writes are held. */
  get notedKeys(): number {
    return this.touched.size;
  }

  private noteUse(row: KeyRow, now: number): void {
    const last = this.touched.get(row.id) ?? row.lastUsedAt ?? 0;
    if (now - last < LAST_USED_EVERY_MS) return;
    for (const [id, at] of this.touched) {
      if (now - at < LAST_USED_EVERY_MS) break;
      this.touched.delete(id);
    }
    // Moved to the end, so the map stays in the order of the writes.
    this.touched.delete(row.id);
    this.touched.set(row.id, now);
    try {
      this.touch.run(now, row.id);
    } catch {
      // Another process holds the write lock: the time is noted at a later request.
      this.touched.delete(row.id);
    }
  }
}

/** Why a stored key does not serve at `now` (revoked, expired), or undefined while it does. */
function refusalOf(row: Pick<KeyRow, 'name' | 'revokedAt' | 'expiresAt'>, now: number): Extract<KeyVerdict, { ok: false }> | undefined {
  // The name is for the audit row and the operator; the caller is told without it: whoever
  // holds a leaked, revoked key would otherwise learn whose it was.
  const attributedTo: RefusedKeyHolder = { id: row.name, authMethod: 'api-key' };
  if (row.revokedAt !== null) return { ok: false, rule: 'auth:revoked-key', reason: `API key '${row.name}' was revoked`, told: 'the API key was revoked', attributedTo };
  if (row.expiresAt !== null && row.expiresAt <= now) return { ok: false, rule: 'auth:expired-key', reason: `API key '${row.name}' expired`, told: 'the API key expired', attributedTo };
  return undefined;
}
