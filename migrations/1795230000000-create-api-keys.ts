import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys (`switchboard keys create`): only the SHA-256 of a key is stored, with a short
 * prefix to tell keys apart in `keys list`. A name is unique among keys not revoked, so
 * `keys revoke NAME` is unambiguous and a name can be reused after a revocation. Times are
 * epoch milliseconds; roles a JSON array of strings.
 */
export class CreateApiKeys1795230000000 implements MigrationInterface {
  name = 'CreateApiKeys1795230000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE api_key (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        name         TEXT    NOT NULL,
        prefix       TEXT    NOT NULL,
        key_hash     TEXT    NOT NULL UNIQUE,
        roles        TEXT    NOT NULL DEFAULT '[]',
        created_at   INTEGER NOT NULL,
        expires_at   INTEGER,
        revoked_at   INTEGER,
        last_used_at INTEGER
      )`);
    await q.query(`CREATE UNIQUE INDEX api_key_active_name ON api_key (name) WHERE revoked_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE api_key`);
  }
}
