import { ErrorCode, JsonRpcPeer, McpError, type PeerRequestOptions } from '@switchboard/core';
import type { ListLimits, ServerConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import { RetrySchedule } from './backoff.js';
import { handshake } from './handshake.js';
import { HealthProbe } from './health-probe.js';
import { LastSends } from './last-sends.js';
import { LogMessageBounds } from './log-message-bounds.js';
import { logCapabilityWarning } from './served-capabilities.js';
import { answerServerRequest } from './server-request-routing.js';
import { TaskCalls, runsToolTasks } from './task-calls.js';
import { RelayedTasks } from './relayed-tasks.js';
import { UpstreamLists } from './upstream-lists.js';
import { credentialsOf, redactFailure, redactUpstreamError, redactUpstreamText, type UpstreamRedactor } from './upstream-redaction.js';
import { modernOnlyRefusal } from './transports/modern-only.js';
import { BothTransportsFailed, httpStatusOf, looksLikeLegacySse, type RemoteFlavour, type TransportFactory } from './transports/transport-factory.js';
import { ContentTypeError } from './transports/http-status-error.js';
import { closeDetail, type UpstreamTransport } from './transports/upstream-transport.js';
import type {
  ClientIdentity,
  ServerRequestHandler,
  UpstreamListener,
  UpstreamState,
  UpstreamStatus,
} from './upstream.types.js';

export interface UpstreamDeps {
  logger: Logger;
  factory: TransportFactory;
  client: ClientIdentity;
  listener: UpstreamListener;
  serverRequests?: ServerRequestHandler;
  /** Declared in initialize: what the gateway can answer of the server's own requests. */
  clientCapabilities?: Item;
  healthIntervalMs?: number;
  /**
   * Hides secrets in what an upstream says before a host or the log reads it (its errors,
   * why it is down); the upstream's own credentials (credentialsOf) are hidden in any case.
   */
  redactor?: UpstreamRedactor;
}

type Item = Record<string, unknown>;

/** How often a server that keeps failing to connect in the same way is warned of again (its retries come every 30 s at most). */
const FAILURE_REPEAT_MS = 10 * 60_000;

/**
 * One MCP client connection to one upstream server: connects (with the spec's Streamable
 * HTTP -> HTTP+SSE fallback), keeps itself healthy, reconnects with backoff, and fails
 * requests fast while it is not connected, so one dead upstream never blocks the others.
 */
export class UpstreamConnection {
  private stateValue: UpstreamState = 'down';
  private since = new Date();
  private peer?: JsonRpcPeer;
  private transport?: UpstreamTransport;
  private generation = 0;
  private readonly retries = new RetrySchedule();
  private lastError?: string;
  /** When a failed connect was last warned of (Date.now()); a retry failing alike waits FAILURE_REPEAT_MS for the next. */
  private failureWarnedAt = 0;
  /** The last connect attempt failed: the next is a retry of a server that stays down. */
  private lastConnectFailed = false;
  private flavour?: RemoteFlavour;
  private stopped = false;
  private connecting?: Promise<void>;
  /** Notifications and answers being sent: what a stop waits for. */
  private readonly lastSends = new LastSends();
  /** The peer of a connect attempt still in its handshake. */
  private opening?: JsonRpcPeer;
  private readonly log: Logger;
  private readonly lists: UpstreamLists;
  private readonly logMessages: LogMessageBounds;
  private readonly health = new HealthProbe({
    peer: () => this.peer,
    answered: () => {
      if (this.stateValue === 'degraded') this.setState('ready');
    },
    // An HTTP upstream's failure can quote its URL, which may carry a credential.
    lost: (reason) => this.connectionLost(this.redacted(reason)),
    trouble: (reason) => this.reportTrouble(reason),
  });

  protocolVersion?: string;
  serverInfo?: Item;
  capabilities: Item = {};
  instructions?: string;
  /** What /readyz warns of this upstream's declared capabilities (capabilityWarning). */
  private capabilitiesWarning?: string;
  /** Its task-only tools, and tools/calls to them run as tasks for hosts that never see the task. */
  readonly tasks: TaskCalls;
  /** The tasks relayed to hosts that speak tasks (ADR 012). */
  readonly relayedTasks: RelayedTasks;

  constructor(
    private current: ServerConfig,
    private readonly deps: UpstreamDeps,
  ) {
    this.log = deps.logger.child({ upstream: current.name });
    this.lists = new UpstreamLists(current.name, this.log);
    this.logMessages = new LogMessageBounds(this.log);
    const runsTasks = () => runsToolTasks(this.protocolVersion, this.capabilities);
    this.tasks = new TaskCalls(current.name, (method, params, options) => this.request(method, params, options), runsTasks);
    this.relayedTasks = new RelayedTasks(current.name, (method, params, options) => this.request(method, params, options));
  }

  /** The server's config as this connection runs it: read where used (timeouts, connectMs, alias). */
  get config(): ServerConfig {
    return this.current;
  }

  /**
   * A new version of this server's entry that needs no restart (config's restartNeeded says
   * so): from the next use on, the connection runs with it.
   */
  updateConfig(config: ServerConfig): void {
    this.current = config;
  }

  get name(): string {
    return this.config.name;
  }

  get state(): UpstreamState {
    return this.stateValue;
  }

  get isAvailable(): boolean {
    return this.stateValue === 'ready' || this.stateValue === 'degraded';
  }

  get inFlight(): number {
    return this.peer?.pendingCount ?? 0;
  }

  status(): UpstreamStatus {
    const truncatedLists = this.lists.truncated();
    return {
      name: this.name,
      transport: this.config.transport === 'stdio' ? 'stdio' : (this.flavour ?? this.config.transport),
      state: this.stateValue,
      since: this.since.toISOString(),
      protocolVersion: this.protocolVersion,
      serverInfo: this.serverInfo,
      lastError: this.lastError,
      reconnectAttempts: this.retries.attempts,
      pid: (this.transport as { pid?: number } | undefined)?.pid,
      ...(truncatedLists.length > 0 && { truncatedLists }),
      ...(this.capabilitiesWarning !== undefined && { warning: this.capabilitiesWarning }),
    };
  }

  start(): void {
    this.stopped = false;
    void this.connect();
    this.health.start(this.deps.healthIntervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.retries.cancel();
    this.health.stop();
    this.generation++;
    // A connect attempt to an upstream that never answers would hold the stop (and with it
    // shutdown or a reload) for the whole connect timeout: fail it now.
    this.opening?.close(new McpError(ErrorCode.UpstreamUnavailable, `Upstream '${this.name}' was stopped`));
    await this.connecting?.catch(() => undefined);
    await Promise.all([this.tasks.cancelAll(), this.relayedTasks.cancelAll()]);
    this.relayedTasks.gone(`upstream '${this.name}' was stopped`);
    // Calls still running (a drain that ran out, a reload that dropped the server) are
    // cancelled upstream, and sent before the transport closes (LastSends).
    this.peer?.close(new McpError(ErrorCode.UpstreamUnavailable, `Upstream '${this.name}' was stopped`), {
      cancelReason: 'The gateway stopped the connection',
    });
    const transport = this.transport;
    this.peer = undefined;
    this.transport = undefined;
    this.setState('stopped');
    this.logMessages.stop();
    await this.lastSends.settled();
    await transport?.close().catch(() => undefined);
  }

  /** Sends a request; fails fast with -32010 when the upstream is not connected. */
  async request(method: string, params: Item | undefined, options: PeerRequestOptions = {}): Promise<Item> {
    try {
      return await this.requirePeer().request(method, params, options);
    } catch (err) {
      if (err instanceof McpError || httpStatusOf(err) !== 404 || this.config.transport === 'stdio') throw this.hostError(err);
      // The spec: 404 on a request with a session id means the session is gone; start a
      // new one. The request was not processed, so sending it once more is safe; once.
      this.log.info('upstream session expired; re-initializing');
      try {
        await this.reconnectNow();
        return await this.requirePeer().request(method, params, options);
      } catch (retryErr) {
        throw this.hostError(retryErr);
      }
    }
  }

  /**
   * A request's failure as the host hears it: a JSON-RPC error as it is; a transport failure
   * as -32000 naming the HTTP status, if any.
   */
  private hostError(err: unknown): McpError {
    if (err instanceof McpError) return redactUpstreamError(err, this.credentials(), this.deps.redactor);
    const status = httpStatusOf(err);
    this.log.warn({ err: this.redacted(String(err)) }, 'request to upstream failed');
    void this.health.probe();
    // The status (or the content type of a 2xx) says what happened; the body (an error page,
    // a stack trace) stays in the log.
    let what = status === undefined ? 'could not be reached' : `answered HTTP ${status}`;
    if (err instanceof ContentTypeError) what = err.answered;
    return new McpError(ErrorCode.ConnectionClosed, `Upstream '${this.name}' ${what}`);
  }

  notify(method: string, params?: Item): Promise<void> {
    return this.peer?.notify(method, params).catch(() => undefined) ?? Promise.resolve();
  }

  /**
   * Reads a whole list (readList): what `limits` allow of it, in the upstream's order. A cut
   * shows in status(); it and the items left out are logged once, not at every re-read.
   */
  async listAll(method: string, key: string, limits: ListLimits): Promise<Item[]> {
    const timeoutMs = this.config.timeouts.requestMs;
    const page = (cursor: string | undefined) => this.request(method, cursor === undefined ? undefined : { cursor }, { timeoutMs });
    const { items, taskOnly, taskOptional } = await this.lists.read(page, method, key, limits, runsToolTasks(this.protocolVersion, this.capabilities));
    if (key === 'tools') this.tasks.listed(taskOnly, taskOptional);
    return items;
  }

  /** The credentials this connection holds: an error that quotes one is not served as it is. */
  private credentials(): string[] {
    return credentialsOf(this.config, this.deps.redactor);
  }

  private redacted(text: string): string {
    return redactUpstreamText(text, this.credentials(), this.deps.redactor);
  }

  /**
   * Marks a connected upstream degraded (e.g. a list refresh failed). Not one that is down
   * or connecting: a request that failed with its connection says less than the reason it
   * was lost (a message over the size limit, an exit status), which stays its lastError.
   */
  reportTrouble(reason: string): void {
    if (!this.isAvailable) return;
    this.lastError = reason;
    if (this.stateValue === 'ready') this.setState('degraded');
  }

  private requirePeer(): JsonRpcPeer {
    if (!this.peer || !this.isAvailable) {
      throw new McpError(ErrorCode.UpstreamUnavailable, `Upstream '${this.name}' is not available (${this.stateValue})`, {
        server: this.name,
        state: this.stateValue,
      });
    }
    return this.peer;
  }

  private connect(): Promise<void> {
    if (this.connecting) return this.connecting;
    this.connecting = (async () => {
      this.retries.cancel();
      // A retry of a down upstream: its state lines go to debug, and a failure like the last
      // one is warned of again only every FAILURE_REPEAT_MS, so a server that stays down does
      // not write three lines every 30 s for as long as the daemon runs.
      const retrying = this.lastConnectFailed;
      this.setState('connecting', retrying);
      try {
        await this.connectOnce(retrying);
        // Not `attempts = 0`: an upstream that crashes soon after its handshake keeps backing off.
        this.retries.connected();
        this.health.connected();
        this.lastError = undefined;
        this.lastConnectFailed = false;
        this.setState('ready');
      } catch (err) {
        // stop() ended the attempt on purpose (shutdown, a reload, a failed start): nothing
        // failed, and stop() itself moves the state on to `stopped`.
        if (this.stopped) return;
        // An HTTP error's body, a child's exit message: they may quote a credential.
        const previousError = this.lastError;
        this.lastConnectFailed = true;
        this.lastError = redactFailure(err, this.credentials(), this.deps.redactor);
        const now = Date.now();
        const repeated = retrying && this.lastError === previousError && now - this.failureWarnedAt < FAILURE_REPEAT_MS;
        if (repeated) {
          this.log.debug({ err: this.lastError, attempt: this.retries.attempts }, 'upstream connect failed');
        } else {
          this.failureWarnedAt = now;
          this.log.warn({ err: this.lastError, attempt: this.retries.attempts }, 'upstream connect failed');
        }
        this.setState('down', retrying);
        this.scheduleRetry();
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  private async connectOnce(retrying: boolean): Promise<void> {
    try {
      await this.connectByTransport(retrying);
    } catch (err) {
      // A server of a revision the gateway does not speak: said so, not as a failed handshake.
      const modern = modernOnlyRefusal(err);
      throw modern ? new Error(modern, { cause: err }) : err;
    }
  }

  private async connectByTransport(retrying: boolean): Promise<void> {
    if (this.config.transport !== 'http') return this.openSession(this.config.transport === 'sse' ? 'sse' : undefined);
    if (this.flavour) return this.openSession(this.flavour);
    try {
      await this.openSession('streamable-http');
      this.flavour = 'streamable-http';
    } catch (err) {
      // A 4xx is how an old HTTP+SSE server answers, but also how a modern-only one refuses.
      if (!looksLikeLegacySse(err) || modernOnlyRefusal(err)) throw err;
      const fallback = 'Streamable HTTP refused with a 4xx; trying the legacy HTTP+SSE transport';
      if (retrying) this.log.debug(fallback);
      else this.log.info(fallback);
      try {
        await this.openSession('sse');
      } catch (sseErr) {
        if (this.stopped) throw sseErr;
        throw new BothTransportsFailed(err, sseErr);
      }
      this.flavour = 'sse';
    }
  }

  private async openSession(flavour: RemoteFlavour | undefined): Promise<void> {
    const generation = ++this.generation;
    const transport = await this.deps.factory.create(this.config, flavour, this.log);
    if (this.stopped || generation !== this.generation) throw new Error('stopped while connecting');
    const peer = new JsonRpcPeer((message, options) => this.lastSends.send(transport, message, options), {
      onRequest: (request, ctx) => answerServerRequest(this, this.deps.serverRequests, this.peer ?? this.opening, request, ctx),
      onNotification: (n) => {
        if (n.method === 'notifications/tasks/status') return this.relayedTasks.statusNotified(n.params);
        const relayed = n.method === 'notifications/message' ? this.logMessages.relayable(n) : n;
        if (relayed) this.deps.listener.notification?.(this.name, relayed);
      },
      onInternalError: (err, request) => this.log.error({ err, method: request.method }, 'server request handler failed'),
    });
    transport.onmessage = (message, extra) => peer.handle(message, extra);
    transport.onclose = () => {
      // During the handshake this fails initialize at once (a child that exits on start is
      // reported with its exit status, not after the connect timeout); later it is a loss.
      peer.close(new McpError(ErrorCode.ConnectionClosed, `Upstream '${this.name}' closed the connection${closeDetail(transport)}`));
      this.onTransportClosed(generation, transport);
    };
    transport.onerror = (err) => this.onTransportError(generation, err);
    this.opening = peer;
    try {
      const { clientCapabilities = {}, client } = this.deps;
      const hello = await handshake(peer, transport, { clientCapabilities, client, connectMs: this.config.timeouts.connectMs }, this.log);
      logCapabilityWarning(hello.warning, this.capabilitiesWarning, this.log);
      this.protocolVersion = hello.protocolVersion;
      this.serverInfo = hello.serverInfo;
      this.capabilities = hello.capabilities;
      this.instructions = hello.instructions;
      this.capabilitiesWarning = hello.warning;
    } catch (err) {
      this.generation++;
      peer.close(new McpError(ErrorCode.ConnectionClosed, 'connect failed'));
      await transport.close().catch(() => undefined);
      throw err;
    } finally {
      this.opening = undefined;
    }
    if (this.stopped) {
      await transport.close().catch(() => undefined);
      throw new Error('stopped while connecting');
    }
    this.peer = peer;
    this.transport = transport;
  }

  private onTransportClosed(generation: number, transport: UpstreamTransport): void {
    // Before the session is established the failed handshake is connect()'s to handle.
    if (generation !== this.generation || this.stopped || !this.peer) return;
    // lastError: a process's exit status, not just that it went away.
    this.connectionLost(`the connection closed${closeDetail(transport)}`);
  }

  private onTransportError(generation: number, err: Error): void {
    if (generation !== this.generation || this.stopped) return;
    this.log.debug({ err: this.redacted(err.message) }, 'upstream transport error');
    // HTTP transports report a dead server only as errors; find out whether it is gone.
    if (this.config.transport !== 'stdio') void this.health.probe();
  }

  /** `retry` false: the caller connects again at once (a session expired; nothing failed). */
  private connectionLost(reason: string, retry = true): void {
    this.generation++;
    // Its tasks are beyond reach: a stdio child's ended with it, and none is polled across connections.
    this.relayedTasks.gone(`the connection to upstream '${this.name}' was lost`);
    this.lastError = reason;
    this.log.warn({ reason }, 'upstream connection lost');
    this.peer?.close(new McpError(ErrorCode.ConnectionClosed, `Upstream '${this.name}' closed the connection`));
    const transport = this.transport;
    this.peer = undefined;
    this.transport = undefined;
    void transport?.close().catch(() => undefined);
    this.setState('down');
    if (retry) this.scheduleRetry();
  }

  private async reconnectNow(): Promise<void> {
    if (this.peer) this.connectionLost('session expired', false);
    await this.connect();
  }

  private scheduleRetry(): void {
    if (this.stopped) return;
    this.retries.schedule(() => void this.connect());
  }

  /** `quiet`: a retry's connecting and down again, which only debug shows. */
  private setState(next: UpstreamState, quiet = false): void {
    const previous = this.stateValue;
    if (previous === next) return;
    this.stateValue = next;
    this.since = new Date();
    if (quiet) this.log.debug({ state: next, previous }, 'upstream state');
    else this.log.info({ state: next, previous }, 'upstream state');
    this.deps.listener.stateChanged?.(this.name, next, previous);
  }
}
