import type { CatalogStore, UpstreamSnapshot } from '@switchboard/catalog';
import { deepEqual, restartNeeded, type GatewayConfig, type ListLimits } from '@switchboard/config';
import { ErrorCode, type JsonRpcNotification } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import type { UpstreamConnection, UpstreamRegistry, UpstreamState } from '@switchboard/upstream';

type Kind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

const LISTS: Record<Kind, { method: string; key: string; capability: string }> = {
  tools: { method: 'tools/list', key: 'tools', capability: 'tools' },
  prompts: { method: 'prompts/list', key: 'prompts', capability: 'prompts' },
  resources: { method: 'resources/list', key: 'resources', capability: 'resources' },
  resourceTemplates: { method: 'resources/templates/list', key: 'resourceTemplates', capability: 'resources' },
};

const ALL_KINDS: Kind[] = ['tools', 'prompts', 'resources', 'resourceTemplates'];

const readKey = (server: string, kind: Kind) => `${server}\u0000${kind}`;

const CHANGED: Record<string, Kind[]> = {
  'notifications/tools/list_changed': ['tools'],
  'notifications/prompts/list_changed': ['prompts'],
  'notifications/resources/list_changed': ['resources', 'resourceTemplates'],
};

/**
 * Keeps the catalog equal to what the available upstreams offer: a full read when an
 * upstream becomes ready, a re-read of one list on its list_changed notification, and
 * removal when it goes away (so lists show only what can be called).
 */
export class CatalogSync {
  private readonly warming = new Set<string>();
  private readonly warmWaiters = new Set<() => void>();
  private config!: GatewayConfig;
  /** (server, list) -> sequence number of the last read of it started. */
  private readonly latestRead = new Map<string, number>();
  private readSeq = 0;
  /** Reads under way, per server. */
  private readonly readsInFlight = new Map<string, number>();
  /** Servers whose full read has ended while another read of theirs (a list_changed) still runs. */
  private readonly settleAfterReads = new Set<string>();
  /**
   * (server, list) pairs a list_changed is having read now, and those another list_changed
   * asked to read again once that read ends.
   */
  private readonly listsReading = new Set<string>();
  private readonly readAgain = new Set<string>();
  /** Per server, those waiting in listsRead() for its reads to end. */
  private readonly readWaiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly registry: UpstreamRegistry,
    private readonly store: CatalogStore,
    private readonly logger: Logger,
  ) {
    store.onWarning((warning) => logger.warn({}, `catalog: ${warning}`));
    registry.addListener({
      stateChanged: (server, state, previous) => this.onState(server, state, previous),
      notification: (server, n) => this.onNotification(server, n),
    });
  }

  /** Call before the registry applies the same config. */
  configure(config: GatewayConfig): void {
    const previous = this.config;
    this.config = config;
    // One rebuild for the whole change, so hosts hear one list_changed per list.
    this.store.batch(() => {
      this.store.setNaming({ separator: config.separator, maxLength: 64 });
      const enabled = config.servers.filter((s) => s.enabled);
      this.store.setOrder(enabled.map((s) => s.name));
      const names = new Set(enabled.map((s) => s.name));
      for (const name of names) if (!this.store.snapshot(name)) this.warming.add(name);
      // A server removed before its first read ended is no longer waited for.
      for (const name of [...this.warming]) if (!names.has(name)) this.settleWarm(name);
      for (const name of this.store.servers()) {
        if (!names.has(name)) this.store.removeServer(name);
      }
      // Those of a removed server: else each server name ever configured kept four for good.
      for (const key of [...this.latestRead.keys()]) if (!names.has(key.slice(0, key.lastIndexOf('\u0000')))) this.latestRead.delete(key);
      // A namespace or alias change alters public names without any upstream event.
      for (const name of this.store.servers()) {
        const server = enabled.find((s) => s.name === name)!;
        const snap = this.store.snapshot(name)!;
        this.store.setSnapshot({ ...snap, prefix: server.alias ?? name, namespace: server.namespace ?? config.namespace });
      }
    });
    // New list limits: the lists are read again under them (more of a cut list, or less).
    // Not those of a server about to be restarted: its new connection reads them anyway.
    for (const name of this.store.servers()) {
      const before = previous?.servers.find((s) => s.name === name);
      const after = config.servers.find((s) => s.name === name)!;
      if (before && !restartNeeded(before, after) && !deepEqual(before.lists, after.lists)) void this.read(name, ALL_KINDS);
    }
  }

  /** How many (server, list) read sequence numbers are kept (for tests). */
  get rememberedReads(): number {
    return this.latestRead.size;
  }

  /** What is kept of each list of `server` (config `lists`). */
  private limitsOf(server: string): ListLimits {
    return this.config.servers.find((s) => s.name === server)?.lists ?? this.config.lists;
  }

  /** Resolves once every enabled upstream has been read or has failed its first attempt. */
  warm(maxMs: number): Promise<void> {
    if (this.warming.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        // A host is let in now, read or not: from here on it may hold names and URIs.
        this.store.keepMeanings();
        clearTimeout(timer);
        this.warmWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        // Says why a first session took maxMs, and which upstreams it came without.
        this.logger.info({ upstreams: [...this.warming] }, 'a new session stopped waiting for upstreams still on their first connect; their lists follow once read');
        done();
      }, maxMs);
      this.warmWaiters.add(done);
    });
  }

  /**
   * Resolves once no read of `server`'s lists is under way (at once when none is), or after
   * `maxMs`. Between an upstream's reconnect and the end of the read that follows it, the
   * catalog still lacks its names although it is ready: a request for one waits here.
   */
  listsRead(server: string, maxMs: number): Promise<void> {
    if (!this.readsInFlight.has(server)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.readWaiters.get(server) ?? new Set<() => void>();
      this.readWaiters.set(server, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.readWaiters.get(server) === waiters) this.readWaiters.delete(server);
        resolve();
      };
      const timer = setTimeout(done, maxMs);
      timer.unref?.();
      waiters.add(done);
    });
  }

  private settleWarm(server: string): void {
    if (!this.warming.delete(server) || this.warming.size > 0) return;
    // Every upstream has answered (or failed) once: names were settled by config order, not
    // by who answered first, and from now on they keep their meaning.
    this.store.keepMeanings();
    for (const w of [...this.warmWaiters]) w();
  }

  private onState(server: string, state: UpstreamState, previous: UpstreamState): void {
    if (state === 'ready' && previous !== 'degraded') void this.readAll(server);
    if (state === 'down' || state === 'stopped') {
      // A server still configured is coming back: down, or stopped to be restarted with a
      // changed command, env or url. Its names stay known meanwhile, so a call answers -32010
      // (unavailable, try again) rather than "unknown tool". configure() has already dropped
      // a server that is stopped because it was removed or disabled.
      const expectedBack = state === 'down' || this.config.servers.some((s) => s.name === server && s.enabled);
      this.store.removeServer(server, { remember: expectedBack });
      if (state === 'down') this.settleWarm(server);
    }
  }

  /**
   * A list_changed starts a read of its lists at once, even while a full read runs (whose
   * answer may predate the change). One that arrives while an earlier list_changed's read
   * of the list still runs only asks for one more read when it ends: an upstream that sends
   * list_changed in a loop costs one such read at a time, however fast it sends them.
   */
  private onNotification(server: string, n: JsonRpcNotification): void {
    const kinds = CHANGED[n.method]?.filter((kind) => {
      const key = readKey(server, kind);
      if (!this.listsReading.has(key)) return true;
      this.readAgain.add(key);
      return false;
    });
    if (kinds && kinds.length > 0) void this.read(server, kinds, true);
  }

  private async readAll(server: string): Promise<void> {
    await this.read(server, ALL_KINDS);
    // A server that sends list_changed right after initialized (server-everything does, for
    // tools it registers then) has its full read's list superseded by that re-read: the
    // first lists are complete only once it ends too.
    if (this.readsInFlight.has(server)) this.settleAfterReads.add(server);
    else this.settleWarm(server);
  }

  private async read(server: string, kinds: Kind[], changed = false): Promise<void> {
    this.readsInFlight.set(server, (this.readsInFlight.get(server) ?? 0) + 1);
    if (changed) for (const kind of kinds) this.listsReading.add(readKey(server, kind));
    try {
      await this.readNow(server, kinds);
    } finally {
      if (changed) {
        for (const kind of kinds) this.listsReading.delete(readKey(server, kind));
        // Started before this read is counted out, so a full read still waits for it.
        const again = kinds.filter((kind) => this.readAgain.delete(readKey(server, kind)));
        if (again.length > 0) void this.read(server, again, true);
      }
      const left = this.readsInFlight.get(server)! - 1;
      if (left > 0) this.readsInFlight.set(server, left);
      else {
        this.readsInFlight.delete(server);
        if (this.settleAfterReads.delete(server)) this.settleWarm(server);
        for (const done of [...(this.readWaiters.get(server) ?? [])]) done();
      }
    }
  }

  private async readNow(server: string, kinds: Kind[]): Promise<void> {
    const connection = this.registry.get(server);
    if (!connection || !connection.isAvailable) return;
    // Reads of one upstream overlap (the full read on ready and a list_changed the upstream
    // sends right after initialized, say) and end in any order. Each list is taken from the
    // read of it that started last, and merged into the snapshot as it is when the read
    // ends: a snapshot captured at the start would put back lists another read has just
    // refreshed (or empty them, when there was no snapshot yet), or an alias or namespace
    // that a reload has changed in the meantime.
    const started = kinds.map((kind) => {
      const seq = ++this.readSeq;
      this.latestRead.set(readKey(server, kind), seq);
      return seq;
    });
    const lists = await Promise.all(kinds.map((kind) => this.readList(connection, kind)));
    // The upstream may have gone away while we were reading.
    if (this.registry.get(server) !== connection || !connection.isAvailable) return;
    const config = this.config?.servers.find((s) => s.name === server);
    if (!config) return;
    const fresh = kinds.filter((kind, i) => this.latestRead.get(readKey(server, kind)) === started[i]);
    if (fresh.length === 0) return;
    const next: UpstreamSnapshot = {
      ...(this.store.snapshot(server) ?? {
        server,
        prefix: config.alias ?? server,
        namespace: config.namespace ?? this.config.namespace,
        tools: [],
        prompts: [],
        resources: [],
        resourceTemplates: [],
      }),
    };
    for (const kind of fresh) next[kind] = lists[kinds.indexOf(kind)];
    this.store.setSnapshot(next);
  }

  private async readList(connection: UpstreamConnection, kind: Kind): Promise<readonly Record<string, unknown>[]> {
    const { method, key, capability } = LISTS[kind];
    if (!connection.capabilities[capability]) return [];
    try {
      return await connection.listAll(method, key, this.limitsOf(connection.name));
    } catch (err) {
      // A server written with an SDK's low-level API declares `resources` and often answers
      // only resources/list: it has no templates, and is not at fault (it stayed degraded).
      if (kind === 'resourceTemplates' && (err as { code?: unknown }).code === ErrorCode.MethodNotFound) {
        this.logger.debug({ upstream: connection.name, method }, 'the upstream does not answer resources/templates/list: it has no resource templates');
        return [];
      }
      this.logger.warn({ upstream: connection.name, method, err: String(err) }, 'could not read upstream list');
      connection.reportTrouble(`${method} failed`);
      return this.store.snapshot(connection.name)?.[kind] ?? [];
    }
  }
}
