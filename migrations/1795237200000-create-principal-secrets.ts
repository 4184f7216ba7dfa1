import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Upstream secrets per principal (`switchboard secrets set`): each value sealed with
 * AES-256-GCM under the key in the data dir's `upstream-secrets.key`, so the database file
 * alone does not reveal them.
 */
export class CreatePrincipalSecrets1795237200000 implements MigrationInterface {
  name = 'CreatePrincipalSecrets1795237200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE principal_secret (
        principal  TEXT    NOT NULL,
        name       TEXT    NOT NULL,
        value      BLOB    NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (principal, name)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE principal_secret`);
  }
}
