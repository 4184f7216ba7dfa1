import { ApiKeyVerifier, type AuthPrincipal } from '@switchboard/auth';
import { CREDENTIAL_CHECK_MS, StdioFront, stdioPrincipal } from '@switchboard/downstream';
import type { GatewayConfig } from '@switchboard/config';
import { createLogger, type Logger } from '@switchboard/observability';
import { sqliteConnection } from '@switchboard/persistence';
import { openAuditStore } from './audit-store.js';
import { GatewayRuntime } from './gateway-runtime.js';
import { MAX_BODY_BYTES } from './limits.js';
import { ShutdownSignals, uncommittedRowsNote } from './shutdown-signals.js';

/**
 * `switchboard stdio`: the same merged endpoint on stdin/stdout for hosts that launch MCP
 * servers as subprocesses. Ends when the host closes stdin (or its end of stdout), or on
 * SIGTERM or SIGINT whenever it comes, also during start-up (shutdown-signals.ts): exit 0,
 * the session's calls cancelled, upstreams stopped, the audit log committed. A second signal
 * while it stops exits 1 at once, as the daemon's does.
 */
export async function runStdio(config: GatewayConfig, signals: ShutdownSignals): Promise<void> {
  const logger = createLogger(config.log.level, config.log.format);
  // A host may end the server it launched at any moment, the instant it starts included
  // (the command line caught the signals before it read the config).
  signals.logTo(logger);
  try {
    await serveStdio(config, logger, signals);
  } catch (err) {
    signals.release();
    throw err;
  }
}

async function serveStdio(config: GatewayConfig, logger: Logger, signals: ShutdownSignals): Promise<void> {
  const auditStore = await openAuditStore(config, logger);
  // A host that launches `switchboard stdio` is the local user, unless it passes a key.
  const key = process.env.SWITCHBOARD_API_KEY;
  const keys = new ApiKeyVerifier(sqliteConnection(auditStore.dataSource));
  let principal: AuthPrincipal | undefined;
  if (key) {
    const verdict = keys.verify(key);
    if (!verdict.ok) {
      const reason = `SWITCHBOARD_API_KEY is not a usable key: ${verdict.reason}`;
      // An authentication failure, as an HTTP request's with a bad key is, and like it the
      // row of a revoked or expired key is the key's (found by its name), saying who ran it;
      // an unknown key's is the OS user's. close() commits it.
      const user = stdioPrincipal();
      const holder = 'attributedTo' in verdict ? verdict.attributedTo : undefined;
      auditStore.log?.recordSessionRefused(
        holder
          ? { transport: 'stdio', principal: { ...holder, roles: [] }, rule: verdict.rule, reason: `${reason} (switchboard stdio run by OS user ${user.id})` }
          : { transport: 'stdio', principal: user, rule: verdict.rule, reason },
      );
      await auditStore.close();
      throw new Error(reason);
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
  let stopping: Promise<void> | undefined;
  const stop = (code = 0) =>
    (stopping ??= (async () => {
      clearInterval(keyCheck);
      // The host's calls still running end with the session: cancelled upstream, each with its row.
      front.close();
      await runtime.drainAndStop(runtime.config.timeouts.shutdownMs);
      // Every answered call's row is committed before the process exits.
      await auditStore.close();
      logger.info('stopped');
      logger.flush?.();
      process.exit(code);
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second Ctrl-C (or SIGTERM) means: now. Upstream children are stopped by their watchdog.
      const audit = auditStore.log?.status();
      logger.warn(
        { signal, auditRowsUncommitted: audit?.queuedRows },
        `second signal while shutting down: exiting now, without waiting for the upstreams to stop${uncommittedRowsNote(audit)}`,
      );
      logger.flush?.();
      process.exit(1);
    }
    logger.info({ signal }, 'shutting down: ending the session');
    void stop();
  };
  // The whole process is one session: like an HTTP session's streams (credential-check.ts),
  // it ends within CREDENTIAL_CHECK_MS of its key being revoked or expiring.
  const keyCheck = !key
    ? undefined
    : setInterval(() => {
        const lapse = keyLapse(keys, key);
        if (lapse === undefined) return;
        process.stderr.write(`switchboard stdio: ending: SWITCHBOARD_API_KEY stopped working: ${lapse.reason}\n`);
        // The row an HTTP session ended so gets (credential-check.ts): the end is a security event.
        if (front.sessionId !== undefined && principal !== undefined) {
          auditStore.log?.recordCredentialLapse({ sessionId: front.sessionId, transport: 'stdio', principal, ...lapse });
        }
        void stop(1);
      }, CREDENTIAL_CHECK_MS);
  keyCheck?.unref();
  // Everything stop closes exists now. A signal held during start-up stops it at once, and
  // the host's session is never begun.
  if (signals.handleWith(onSignal)) return stopping;
  await front.run();
  await stop();
}

/** Why the key no longer serves (revoked, expired), or undefined while it does; a database that cannot be read counts as a refusal, as for HTTP sessions. */
function keyLapse(keys: ApiKeyVerifier, key: string): { rule: string; reason: string } | undefined {
  try {
    const verdict = keys.verify(key);
    return verdict.ok ? undefined : { rule: verdict.rule, reason: verdict.reason };
  } catch {
    return { rule: 'auth:error', reason: 'the key could not be checked' };
  }
}
