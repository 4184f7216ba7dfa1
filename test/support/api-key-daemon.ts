import { join } from 'node:path';
import { createKey } from './cli.js';
import { startDaemon, stdioFixture, tempDir, writeConfig, type DaemonHandle } from './daemon.js';

export interface ApiKeyDaemon {
  daemon: DaemonHandle;
  configPath: string;
  /** Where its audit log is. */
  dataDir: string;
  /** The keys made before the start, by name. */
  keys: Record<string, string>;
}

/**
 * Starts a daemon that requires a credential (auth.mode: required, one authorization server
 * named in its metadata) with the stdio fixture as `fx`, after making an API key for each
 * name in `roles` (name -> comma-separated roles, '' for none). Its default effect is allow,
 * chosen: no policy is its subject. Stop it with stopAllDaemons.
 */
export async function startApiKeyDaemon(roles: Record<string, string> = {}): Promise<ApiKeyDaemon> {
  const dir = tempDir();
  const configPath = writeConfig(
    // Allow by default, chosen: these tests are about who calls, not what a policy lets them.
    { auth: { mode: 'required', authorizationServers: ['https://login.example.com'] }, policy: { defaultEffect: 'allow' }, mcpServers: { fx: stdioFixture() } },
    dir,
  );
  // Keys are made before the first start: the command creates and migrates the database.
  const keys: Record<string, string> = {};
  for (const [name, its] of Object.entries(roles)) keys[name] = createKey(configPath, name, its);
  const daemon = await startDaemon(configPath);
  return { daemon, configPath, dataDir: join(dir, 'data'), keys };
}
