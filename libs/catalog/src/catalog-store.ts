import { DEFAULT_NAMING, type NamingOptions } from '@switchboard/core';
import { buildCatalog } from './build-catalog.js';
import { diff, type Catalog } from './catalog.js';
import { NO_CLAIMS, type CatalogClaims, type CatalogDiff, type Claim, type NameRoute, type UpstreamSnapshot } from './catalog.types.js';

const UNRANKED = Number.MAX_SAFE_INTEGER;

export type CatalogListener = (diff: CatalogDiff, catalog: Catalog) => void;

/**
 * The one mutable holder of the current catalog. Mutations (an upstream connects, drops,
 * changes a list, config reloads) are rare and reads are hot, so every mutation rebuilds
 * eagerly and readers only ever dereference `current`.
 */
export class CatalogStore {
  private readonly snapshots = new Map<string, UpstreamSnapshot>();
  private readonly listeners = new Set<CatalogListener>();
  private readonly warningListeners = new Set<(warning: string) => void>();
  private order: readonly string[] = [];
  private catalog: Catalog;
  /** Depth of `batch` calls under way; rebuilds wait for the outermost to end. */
  private batching = 0;
  private dirty = false;
  /**
   * The public tool and prompt names of upstreams that went down, by upstream, until they
   * are back or removed from the config: a call to one of them is then answered "upstream
   * unavailable" rather than "unknown tool", which a host would take for a typo.
   */
  private readonly departed = new Map<string, { tools: Map<string, NameRoute>; prompts: Map<string, NameRoute> }>();

  /** Set by keepMeanings: builds pass the current claims on (see claimsInForce). */
  private keepingMeanings = false;

  constructor(private naming: NamingOptions = DEFAULT_NAMING) {
    this.catalog = buildCatalog([], naming);
  }

  get current(): Catalog {
    return this.catalog;
  }

  /** What one upstream currently contributes, as last set. */
  snapshot(server: string): UpstreamSnapshot | undefined {
    return this.snapshots.get(server);
  }

  /** The servers that currently contribute a snapshot. */
  servers(): string[] {
    return [...this.snapshots.keys()];
  }

  /** Adds or replaces what one upstream offers. */
  setSnapshot(snapshot: UpstreamSnapshot): void {
    this.departed.delete(snapshot.server);
    this.snapshots.set(snapshot.server, snapshot);
    this.rebuild();
  }

  /**
   * The upstream is gone or unavailable: its items leave the catalog. With `remember` (it is
   * down, and expected back) its tool and prompt names stay known to departedTool and
   * departedPrompt until it is back or removed without `remember`.
   */
  removeServer(server: string, options: { remember?: boolean } = {}): void {
    if (options.remember) this.remember(server);
    else this.departed.delete(server);
    if (this.snapshots.delete(server)) this.rebuild();
  }

  /** The route a tool name had on an upstream that is down now, unless the name is served again. */
  departedTool(publicName: string): NameRoute | undefined {
    return this.catalog.resolveTool(publicName) ? undefined : this.departedRoute('tools', publicName);
  }

  /** As departedTool, for prompts. */
  departedPrompt(publicName: string): NameRoute | undefined {
    return this.catalog.resolvePrompt(publicName) ? undefined : this.departedRoute('prompts', publicName);
  }

  private departedRoute(kind: 'tools' | 'prompts', publicName: string): NameRoute | undefined {
    for (const names of this.departed.values()) {
      const route = names[kind].get(publicName);
      if (route) return route;
    }
    return undefined;
  }

  private remember(server: string): void {
    if (!this.snapshots.has(server)) return; // down again before it came back: keep what is remembered
    const routesOf = (kind: 'tools' | 'prompts', resolve: (name: string) => NameRoute | undefined) => {
      const routes = new Map<string, NameRoute>();
      for (const item of this.catalog.items(kind)) {
        const route = resolve(String(item.name));
        if (route?.server === server) routes.set(String(item.name), route);
      }
      return routes;
    };
    this.departed.set(server, {
      tools: routesOf('tools', (name) => this.catalog.resolveTool(name)),
      prompts: routesOf('prompts', (name) => this.catalog.resolvePrompt(name)),
    });
  }

  /**
   * Config order, which decides who gets a contested name or URI that nobody holds yet
   * (every build passes the current claims on: see rebuild). Servers with a snapshot
   * but missing here come last, in the order they were first set, rather than vanishing
   * between a config reload and the removal of their connection.
   */
  setOrder(servers: readonly string[]): void {
    this.order = [...servers];
    // An upstream no longer configured (or disabled) is not coming back.
    for (const server of [...this.departed.keys()]) if (!servers.includes(server)) this.departed.delete(server);
    this.rebuild();
  }

  setNaming(naming: NamingOptions): void {
    this.naming = { ...naming };
    this.rebuild();
  }

  /**
   * From now on hosts may hold public names and URIs (the first upstream reads after start
   * have ended, or hosts were let in before): every later build keeps what each key means,
   * so a server added ahead of another, or one coming back up, gets the prefixed or
   * rewritten form of a key another server holds. Before this, while the upstreams first
   * connect in whatever order, config order alone decides, so names do not depend on
   * which server happened to answer first.
   */
  keepMeanings(): void {
    this.keepingMeanings = true;
  }

  /**
   * Applies several mutations as one: a single rebuild and at most one notification per
   * list at the end (a config reload touches every server; hosts should hear it once).
   */
  batch(mutate: () => void): void {
    this.batching++;
    try {
      mutate();
    } finally {
      this.batching--;
      if (this.batching === 0 && this.dirty) this.rebuild();
    }
  }

  /** Called after a rebuild that changed a host-visible list; returns the unsubscribe. */
  onChange(listener: CatalogListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Called with each warning of a rebuilt catalog (an item left out) that the catalog before
   * it did not have: once when it appears, not at every rebuild while it lasts.
   */
  onWarning(listener: (warning: string) => void): () => void {
    this.warningListeners.add(listener);
    return () => this.warningListeners.delete(listener);
  }

  private rebuild(): void {
    if (this.batching > 0) {
      this.dirty = true;
      return;
    }
    this.dirty = false;
    const next = buildCatalog(this.ordered(), this.naming, this.keepingMeanings ? this.claimsInForce() : NO_CLAIMS);
    const changes = diff(this.catalog, next);
    const before = new Set(this.catalog.warnings);
    const fresh = next.warnings.filter((w) => !before.has(w));
    // Always swap: routes can move (a tool now served by another upstream under the same
    // public definition) even when nothing a host sees has changed.
    this.catalog = next;
    for (const warning of fresh) for (const listener of this.warningListeners) listener(warning);
    if (changes.tools || changes.prompts || changes.resources) this.notify(changes, next);
  }

  /**
   * What the public keys mean now, for servers that are served or down but expected back,
   * keys they no longer list included: a key keeps its meaning while hosts may hold it. A
   * server removed from the config (or removed without `remember`) gives its keys up.
   */
  private claimsInForce(): CatalogClaims {
    const kept = (server: string) => this.snapshots.has(server) || this.departed.has(server);
    const claims = this.catalog.claims;
    const keep = (held: ReadonlyMap<string, Claim>) => new Map([...held].filter(([, claim]) => kept(claim.server)));
    return {
      tools: keep(claims.tools),
      prompts: keep(claims.prompts),
      resources: keep(claims.resources),
      resourceTemplates: keep(claims.resourceTemplates),
      uriPrefixes: new Map([...claims.uriPrefixes].filter(([server]) => kept(server))),
      retiredUriPrefixes: new Map([...claims.retiredUriPrefixes].filter(([, server]) => kept(server))),
    };
  }

  private ordered(): UpstreamSnapshot[] {
    const rank = new Map(this.order.map((server, i) => [server, i]));
    const all = [...this.snapshots.values()];
    // Array.prototype.sort is stable, so unranked servers keep their insertion order.
    return all.sort((a, b) => (rank.get(a.server) ?? UNRANKED) - (rank.get(b.server) ?? UNRANKED));
  }

  private notify(changes: CatalogDiff, catalog: Catalog): void {
    let firstError: unknown;
    let failed = false;
    // A copy, so a listener may unsubscribe itself; one failing listener must not starve
    // the others (catalog sync for every session hangs off this).
    for (const listener of [...this.listeners]) {
      try {
        listener(changes, catalog);
      } catch (err) {
        if (!failed) firstError = err;
        failed = true;
      }
    }
    if (failed) throw firstError;
  }
}
