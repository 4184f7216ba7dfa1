import { ApiKeyVerifier } from '@switchboard/auth';
import { StdioFront } from '@switchboard/downstream';
import type { GatewayConfig } from '@switchboard/config';
import { createLogger } from '@switchboard/observability';
import { sqliteConnection } from '@switchboard/persistence';
import { openAuditStore } from './audit-store.js';
import { GatewayRuntime } from './gateway-runtime.js';
import { MAX_BODY_BYTES } from './limits.js';

/**
 * `switchboard stdio`: the same merged endpoint on stdin/stdout for hosts that launch MCP
 * servers as subprocesses. Ends when the host closes stdin or sends SIGTERM.
 */
export async function runStdio(config: GatewayConfig): Promise<void> {
  const logger = createLogger(config.log.level);
  const auditStore = await openAuditStore(config, logger);
  // A host that launches `switchboard stdio` is the local user, unless it passes a key.
  const key = process.env.SWITCHBOARD_API_KEY;
  let principal;
  if (key) {
    const verdict = new ApiKeyVerifier(sqliteConnection(auditStore.dataSource)).verify(key);
    if (!verdict.ok) {
      await auditStore.close();
      throw new Error(`SWITCHBOARD_API_KEY is not a usable key: ${verdict.reason}`);
    }
    principal = verdict.principal;
  }
  const runtime = new GatewayRuntime(config, logger, auditStore.log, sqliteConnection(auditStore.dataSource));
  await runtime.start();
  const front = new StdioFront(
    {
      dispatcher: runtime.dispatcher,
      sessions: runtime.sessions,
      config: () => runtime.config,
      logger,
      maxBodyBytes: MAX_BODY_BYTES,
    },
    process.stdin,
    process.stdout,
    principal,
  );
  const stop = async () => {
    front.close();
    await runtime.drainAndStop(runtime.config.timeouts.shutdownMs);
    await auditStore.close();
    logger.flush?.();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  await front.run();
  await stop();
}
