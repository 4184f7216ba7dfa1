import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Key rotation (`switchboard keys rotate`): the old key keeps serving for an overlap while
 * its replacement, of the same name, already does. `rotated_at` says when a key was
 * replaced and `replaced_by` by which key's id. The name's partial unique index leaves out
 * rotated keys, so a name has two keys not revoked only while one of them is a rotated one;
 * a second plain key of the name is still refused. `rotated_at`, not `replaced_by`, is what
 * the index reads: the old row must leave the index before the new row is inserted, and the
 * new row's id is known only after.
 */
export class ApiKeyRotation1795248000000 implements MigrationInterface {
  name = 'ApiKeyRotation1795248000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_key ADD COLUMN rotated_at INTEGER`);
    await q.query(`ALTER TABLE api_key ADD COLUMN replaced_by INTEGER REFERENCES api_key (id)`);
    await q.query(`DROP INDEX api_key_active_name`);
    await q.query(`CREATE UNIQUE INDEX api_key_active_name ON api_key (name) WHERE revoked_at IS NULL AND rotated_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Without the columns a name has one key not revoked: a rotated key still in its overlap
    // (or past it, expired) counts as revoked when it was replaced, so the old index holds.
    await q.query(`UPDATE api_key SET revoked_at = rotated_at WHERE rotated_at IS NOT NULL AND revoked_at IS NULL`);
    await q.query(`DROP INDEX api_key_active_name`);
    await q.query(`CREATE UNIQUE INDEX api_key_active_name ON api_key (name) WHERE revoked_at IS NULL`);
    await q.query(`ALTER TABLE api_key DROP COLUMN replaced_by`);
    await q.query(`ALTER TABLE api_key DROP COLUMN rotated_at`);
  }
}
