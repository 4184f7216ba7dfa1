import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AUDIT_ENTITIES } from '@switchboard/audit';
import { MIGRATIONS } from '@switchboard/migrations';
import { migrate, openDatabase } from '@switchboard/persistence';
import { tempDir, writeConfig } from './daemon.js';

/**
 * A config whose data dir holds the database as the version before the newest migration left
 * it (an upgrade's starting point); `last` is the migration it lacks.
 */
export async function olderDatabase(prefix?: string): Promise<{ dir: string; configPath: string; file: string; last: string }> {
  const dir = tempDir(prefix);
  const configPath = writeConfig({ mcpServers: {} }, dir);
  const file = join(dir, 'data', 'switchboard.sqlite');
  mkdirSync(join(dir, 'data'));
  const old = await openDatabase({ file, entities: AUDIT_ENTITIES, migrations: MIGRATIONS.slice(0, -1) });
  await migrate(old);
  await old.destroy();
  return { dir, configPath, file, last: MIGRATIONS.at(-1)!.name };
}
