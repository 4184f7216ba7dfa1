import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { AuditQuery } from '@switchboard/audit';
import { ApiKeyVerifier, fetchFailureMessage, fetchRecoveryMessage, HttpAuthenticator, JwtVerifier } from '@switchboard/auth';
import { ConfigWatcher, unsafeListenReason, type GatewayConfig } from '@switchboard/config';
import {
  LegacySseService,
  McpHttpRoutes,
  StreamableHttpService,
  UnlistedWarnings,
  type DownstreamDeps,
  type RefusalListener,
} from '@switchboard/downstream';
import { PinoNestLogger, createLogger, type Logger } from '@switchboard/observability';
import { sqliteConnection } from '@switchboard/persistence';
import { AppModule } from './app.module.js';
import { openAuditStore } from './audit-store.js';
import { GatewayRuntime } from './gateway-runtime.js';
import { IdleGc } from './idle-gc.js';
import { RestartNotices } from './restart-notices.js';
import { MAX_BODY_BYTES } from './limits.js';
import { ShutdownSignals, uncommittedRowsNote } from './shutdown-signals.js';

/**
 * What the config file itself said, before command-line overrides (`--port`, `--data-dir`):
 * a reload warns only when the file changes these, and the bytes let an edit saved while the
 * daemon starts be applied rather than lost.
 */
export interface FileSettings {
  listen: GatewayConfig['listen'];
  dataDir: string;
  bytes?: Buffer;
}

/**
 * `switchboard start`: the HTTP daemon. Prints one line to stdout when it listens (tools and
 * tests read the URL from it); everything else goes to the log on stderr. SIGTERM or SIGINT
 * drains and stops it with exit 0 whenever it comes, also during start-up (shutdown-signals.ts).
 */
export async function runDaemon(config: GatewayConfig, fromFile: FileSettings, signals: ShutdownSignals): Promise<void> {
  const logger = createLogger(config.log.level, config.log.format);
  signals.logTo(logger);
  try {
    await startDaemon(config, fromFile, logger, signals);
  } catch (err) {
    signals.release();
    throw err;
  }
}

async function startDaemon(config: GatewayConfig, fromFile: FileSettings, logger: Logger, signals: ShutdownSignals): Promise<void> {
  // The config check and `--host` refuse this first (exit 2); this is the last guard, for
  // callers that build a config themselves.
  const unsafe = unsafeListenReason(config.listen.host, config.auth.mode);
  if (unsafe) throw new Error(`refusing to start: auth.mode ${unsafe}`);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 }); // owner only: the audit log, keys (a dir that exists keeps its mode)
  const auditStore = await openAuditStore(config, logger);
  // Keys are looked up in the database on every request, so `keys revoke` takes effect at once.
  const authenticator = new HttpAuthenticator(
    new ApiKeyVerifier(sqliteConnection(auditStore.dataSource)),
    () => config.auth.mode,
    config.auth.jwt &&
      new JwtVerifier(config.auth.jwt, {
        onKeysUnavailable: (failure) => logger.warn({ jwksUrl: config.auth.jwt!.jwksUrl }, fetchFailureMessage(failure)),
        onKeysRecovered: (recovery) => logger.info({ jwksUrl: config.auth.jwt!.jwksUrl }, fetchRecoveryMessage(recovery)),
        onOperatorNote: (note) => logger.info(note.fields, note.message),
      }),
  );
  if (config.auth.mode === 'none') logger.info('auth.mode: none: HTTP callers without a credential are the anonymous loopback user');

  const runtime = new GatewayRuntime(config, logger, auditStore.log, sqliteConnection(auditStore.dataSource), { servesInbox: true });
  // The one listener for every place that runs the Host/Origin check and authentication: the
  // MCP endpoints (deps), the admin API and inbox, / and /readyz (AppModule). The audit row
  // when the audit log is on; the operator's warning of an unlisted Host or Origin always.
  const unlistedWarnings = new UnlistedWarnings(logger);
  const onRefused: RefusalListener = (refusal) => {
    auditStore.log?.recordHttpRefusal(refusal);
    unlistedWarnings.listener(refusal);
  };
  const deps: DownstreamDeps = {
    dispatcher: runtime.dispatcher,
    sessions: runtime.sessions,
    config: () => runtime.config,
    logger,
    maxBodyBytes: MAX_BODY_BYTES,
    onRefused,
    authenticate: (req) => authenticator.authenticate(req),
    credentialLapse: (principal) => authenticator.credentialLapse(principal),
    onCredentialLapse: (ended) => {
      auditStore.log?.recordCredentialLapse(ended);
      runtime.credentialLapsed(ended.principal);
    },
  };
  const streamable = new StreamableHttpService(deps);
  streamable.startIdleSweep();
  const legacy = new LegacySseService(deps);
  legacy.startCredentialCheck();
  const routes = new McpHttpRoutes(streamable, legacy, logger, deps);
  const auditQuery = auditStore.log && new AuditQuery(auditStore.dataSource);
  const app = await NestFactory.create(AppModule.register({ runtime, auditQuery, authenticate: deps.authenticate, onRefused }), {
    bodyParser: false,
    logger: new PinoNestLogger(logger),
  });
  const framework = app.getHttpAdapter().getInstance() as RequestListener & { disable(s: string): void };
  framework.disable('x-powered-by');
  await app.init();

  // Start-up, requests and upstreams coming and going are activity; see idle-gc.ts.
  const idleGc = new IdleGc(logger, { gc: globalThis.gc, busy: () => runtime.inFlight() > 0 });
  runtime.registry.addListener({ stateChanged: () => idleGc.activity() });
  // Our own listener: the MCP endpoints first, everything else (health, later admin) to Nest.
  const server = createServer((req, res) => {
    idleGc.activity();
    if (!routes.handle(req, res)) framework(req, res);
  });
  // An idle connection is kept 65 s, not Node's 5: whoever reuses a connection the other side
  // has just closed fails a request that never arrived ("other side closed", a proxy's 502),
  // so the side that closes first must be the client. Load balancers keep idle connections
  // 60 s and nginx's upstream keepalive 60 s; hosts take the Keep-Alive hint and close before.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  // The port first: a daemon that cannot listen (a second `npm start`, a service manager's
  // restarts) must not start and stop every upstream (an npx download, a container) to find out.
  // Upstreams connect in the background either way, so a host that comes before they are up
  // meets what it would a moment after: the servers connected so far, and /readyz not_ready.
  try {
    await listen(server, config.listen.port, config.listen.host);
  } catch (err) {
    // Nothing may keep running behind a daemon that could not listen (the audit writer, the
    // runtime's timers), or the process would never exit and a service manager would see it up.
    await runtime.drainAndStop(0);
    await auditStore.close();
    await app.close();
    const code = (err as NodeJS.ErrnoException).code;
    // A second `npm start` is the usual way to meet this: say the way out, not only the cause.
    const inUse = 'the address is already in use (another Switchboard, or another program, listens there: stop it, or give another port with --port N or listen.port)';
    const why = code === 'EADDRINUSE' ? inUse : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new Error(`cannot listen on ${config.listen.host}:${config.listen.port}: ${why}`, { cause: err });
  }
  await runtime.start();
  // Only the command line's overrides differ from the file the daemon started from.
  const restartNotices = new RestartNotices({ ...config, listen: fromFile.listen, dataDir: fromFile.dataDir }, () => runtime.config);
  const watcher = new ConfigWatcher(config.source, (outcome) => {
    if ('error' in outcome) {
      // With the unknown keys found on the way, as `config check` lists them: a misspelt key is
      // often why a required one is missing (`comand:`, did you mean `command`?).
      const { problems, warnings } = outcome.error;
      logger.error({ problems, ...(warnings.length > 0 && { warnings }) }, 'config change refused; the previous config stays in force');
      return;
    }
    for (const w of outcome.warnings) logger.warn(w, 'config warning');
    for (const [fields, message] of restartNotices.changedBy(outcome.config)) logger.warn(fields, message);
    // The listener cannot move, the audit log and authentication stay as started (auth.mode
    // was checked against the listen address), and command-line overrides (--data-dir)
    // outlive a reload.
    const next = {
      ...outcome.config,
      listen: runtime.config.listen,
      dataDir: runtime.config.dataDir,
      audit: runtime.config.audit,
      auth: runtime.config.auth,
      policy: runtime.config.policy,
      log: runtime.config.log,
    };
    void runtime.reload(next).catch((err) => logger.error({ err }, 'config reload failed'));
  }, { notice: (message) => logger.warn({ config: config.source }, message) });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      // A second Ctrl-C (or SIGTERM) means: now. Upstream children are stopped by their watchdog.
      const audit = auditStore.log?.status();
      logger.warn(
        { signal, auditRowsUncommitted: audit?.queuedRows },
        `second signal while draining: exiting now, without waiting for in-flight calls${uncommittedRowsNote(audit)}`,
      );
      logger.flush?.();
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight calls');
    idleGc.stop();
    watcher.stop();
    await runtime.drainAndStop(runtime.config.timeouts.shutdownMs);
    // No request may arrive once the audit log is closed (its refusal would have no row):
    // the listener and the sessions go first.
    streamable.closeAll();
    legacy.closeAll();
    server.close();
    server.closeAllConnections();
    unlistedWarnings.stop();
    // Every answered call's row is committed before the process exits.
    await auditStore.close();
    await app.close();
    logger.info('stopped');
    logger.flush?.();
    process.exit(0);
  };
  // Everything stop closes exists now. A signal from here on stops the daemon; one that came
  // during start-up stops it at once, and it is not announced as listening.
  if (signals.handleWith((signal) => void stop(signal))) return;
  signals.onHangup(() => {
    if (stopping) return;
    logger.info({ signal: 'SIGHUP' }, 'SIGHUP: reading the config and policy files again');
    // Both, whatever the first finds: each reports its own change (or refusal) as a save would.
    const configChanged = watcher.checkNow();
    const policyChanged = runtime.checkPolicyNow();
    if (!configChanged && !policyChanged) logger.info('SIGHUP: the config and policy files are unchanged');
  });

  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url, config: config.source }, 'listening');
  // Whoever started us may have closed stdout (`switchboard start | true`): the line is for
  // them, the daemon's log is on stderr, and an EPIPE must not end a daemon that is up.
  process.stdout.on('error', (err) => logger.warn({ err: (err as Error).message }, 'stdout is closed; the listening line was not delivered'));
  process.stdout.write(`Switchboard listening on ${url}/mcp\n`);
  idleGc.activity();
  watcher.start(fromFile.bytes);
}

/** How long an idle HTTP connection is kept open (see where it is set). */
const KEEP_ALIVE_MS = 65_000;

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
