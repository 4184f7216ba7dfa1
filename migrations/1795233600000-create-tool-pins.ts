import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tool-definition pins (rug-pull defence): the fingerprint of each tool's name, description,
 * input schema and annotations when first seen; a changed definition waits in `pending_*`
 * until an admin accepts it (`switchboard tools accept`).
 */
export class CreateToolPins1795233600000 implements MigrationInterface {
  name = 'CreateToolPins1795233600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tool_pin (
        server             TEXT    NOT NULL,
        tool               TEXT    NOT NULL,
        hash               TEXT    NOT NULL,
        definition         TEXT    NOT NULL,
        pinned_at          INTEGER NOT NULL,
        pending_hash       TEXT,
        pending_definition TEXT,
        changed_at         INTEGER,
        PRIMARY KEY (server, tool)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE tool_pin`);
  }
}
