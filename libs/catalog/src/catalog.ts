import type {
  CatalogClaims,
  CatalogDiff,
  CatalogPage,
  Item,
  ListKind,
  NameRoute,
  ResourceRoute,
  ServerCounts,
  TemplateRoute,
} from './catalog.types.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { catalogFingerprints, type CatalogFingerprints } from './fingerprint.js';
import { parseGatewayUri, toGatewayUri } from './resource-uri.js';
import type { ListFilter, SortedList } from './sorted-list.js';
import type { UriTemplateMatcher } from './uri-template.js';

export interface TemplateMatcher {
  readonly server: string;
  readonly pattern: UriTemplateMatcher;
}

/** Everything `buildCatalog` computes; a Catalog only reads it. */
export interface CatalogParts {
  /** Servers in the catalog, config order. */
  servers: readonly string[];
  warnings: readonly string[];
  lists: Readonly<Record<ListKind, SortedList>>;
  toolRoutes: ReadonlyMap<string, NameRoute>;
  promptRoutes: ReadonlyMap<string, NameRoute>;
  resourceRoutes: ReadonlyMap<string, ResourceRoute>;
  templateRoutes: ReadonlyMap<string, TemplateRoute>;
  /** server -> the prefix in its gateway URIs (unique per catalog). */
  uriPrefixes: ReadonlyMap<string, string>;
  /** prefix -> server, for the prefixes servers have now and those they had before an alias change. */
  serverByUriPrefix: ReadonlyMap<string, string>;
  /** server -> (upstream URI -> public URI) for the resources it lists. */
  listedUris: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /**
   * Bare URI -> the servers that have it under a gateway URI because another server had it:
   * a template of theirs, or their being the sole resource server, never takes it.
   */
  keptOffUris: ReadonlyMap<string, ReadonlySet<string>>;
  /** Every server's templates, config order then upstream order: first match wins. */
  templateMatchers: readonly TemplateMatcher[];
  counts: readonly ServerCounts[];
  /** What every public key means, with those reserved for holders that no longer serve them. */
  claims: CatalogClaims;
  fingerprints: CatalogFingerprints;
}

/**
 * The merged view of every available upstream at one moment: immutable, built once per
 * change, read on every request. Lookups are Map gets; a page is a binary search.
 */
export class Catalog {
  private readonly serversByKind: Readonly<Record<ListKind, readonly string[]>>;
  /** The only server offering resources or templates, or the only server at all. */
  private readonly soleResourceServer: string | undefined;

  constructor(private readonly parts: CatalogParts) {
    const withAny = (kind: ListKind) => Object.freeze(parts.counts.filter((c) => c[kind] > 0).map((c) => c.server));
    this.serversByKind = {
      tools: withAny('tools'),
      prompts: withAny('prompts'),
      resources: withAny('resources'),
      resourceTemplates: withAny('resourceTemplates'),
    };
    const resourceServers = parts.counts.filter((c) => c.resources + c.resourceTemplates > 0);
    // With a single upstream every URI can only be meant for it, even one it never listed
    // (a resource link returned by a tool, say); otherwise only a sole resource server may
    // take URIs nobody claims.
    this.soleResourceServer =
      resourceServers.length === 1 ? resourceServers[0].server : parts.servers.length === 1 ? parts.servers[0] : undefined;
  }

  /** Servers in the catalog, config order. */
  get servers(): readonly string[] {
    return this.parts.servers;
  }

  /** Problems found in what the upstreams sent (duplicates, items without a key). */
  get warnings(): readonly string[] {
    return this.parts.warnings;
  }

  get fingerprints(): CatalogFingerprints {
    return this.parts.fingerprints;
  }

  /** What every public key means, for the next build (CatalogStore passes them on). */
  get claims(): CatalogClaims {
    return this.parts.claims;
  }

  /** The whole public list, sorted by its key. */
  items(kind: ListKind): readonly Item[] {
    return this.parts.lists[kind].items;
  }

  resolveTool(publicName: string): NameRoute | undefined {
    return this.parts.toolRoutes.get(publicName);
  }

  resolvePrompt(publicName: string): NameRoute | undefined {
    return this.parts.promptRoutes.get(publicName);
  }

  resolveTemplate(publicUriTemplate: string): TemplateRoute | undefined {
    return this.parts.templateRoutes.get(publicUriTemplate);
  }

  /**
   * Which upstream serves a URI a host asks for, and under which URI. In order: a gateway
   * URI with a known prefix; a listed resource (or one held for a server that no longer
   * lists it, or is down); the first template (config order) that matches; the sole
   * resource server. The last two skip a server kept off the URI (see keptOffUris).
   */
  resolveResource(publicUri: string): ResourceRoute | undefined {
    const gateway = parseGatewayUri(publicUri);
    const owner = gateway && this.parts.serverByUriPrefix.get(gateway.prefix);
    if (owner !== undefined) return { server: owner, uri: gateway!.original };
    const listed = this.parts.resourceRoutes.get(publicUri);
    if (listed) return listed;
    const keptOff = this.parts.keptOffUris.get(publicUri);
    for (const t of this.parts.templateMatchers) {
      if (!keptOff?.has(t.server) && t.pattern.test(publicUri)) return { server: t.server, uri: publicUri };
    }
    const sole = this.soleResourceServer;
    return sole === undefined || keptOff?.has(sole) ? undefined : { server: sole, uri: publicUri };
  }

  /**
   * Maps a URI an upstream sent (read results, resource links, updated notifications) to
   * what hosts must see. It is rewritten exactly when, unchanged, it would not route back to
   * the same server and URI, so `resolveResource(toPublicUri(s, u))` is always `{ s, u }`
   * for a server in the catalog. A server not in the catalog has no prefix: unchanged.
   */
  toPublicUri(server: string, uri: string): string {
    const listed = this.parts.listedUris.get(server)?.get(uri);
    if (listed !== undefined) return listed;
    const prefix = this.parts.uriPrefixes.get(server);
    if (prefix === undefined) return uri;
    const route = this.resolveResource(uri);
    return route && route.server === server && route.uri === uri ? uri : toGatewayUri(prefix, uri);
  }

  /** Servers that contributed at least one item of a kind, config order. */
  serversWith(kind: ListKind): readonly string[] {
    return this.serversByKind[kind];
  }

  /** Items per server, config order, for status pages. */
  counts(): readonly ServerCounts[] {
    return this.parts.counts;
  }

  /**
   * One page of a public list. `cursor` is whatever the host sent (validated here: anything
   * this gateway did not issue for `kind` is -32602). `filter` hides items (a principal's
   * policy) without making pages short.
   */
  page(kind: ListKind, cursor: unknown, pageSize: number, filter?: ListFilter): CatalogPage {
    if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`pageSize must be a positive integer, got ${pageSize}`);
    const after = cursor === undefined ? undefined : decodeCursor(kind, cursor);
    const slice = this.parts.lists[kind].after(after, pageSize, filter);
    return slice.more && slice.lastKey !== undefined
      ? { items: slice.items, nextCursor: encodeCursor(kind, slice.lastKey) }
      : { items: slice.items };
  }
}

const EMPTY_FINGERPRINTS = catalogFingerprints({ tools: [], prompts: [], resources: [], resourceTemplates: [] });

/**
 * Which host-visible lists differ; `undefined` stands for the empty catalog. O(1) thanks to
 * the build-time fingerprints.
 */
export function diff(prev: Catalog | undefined, next: Catalog): CatalogDiff {
  const before = prev?.fingerprints ?? EMPTY_FINGERPRINTS;
  const after = next.fingerprints;
  return {
    tools: before.tools !== after.tools,
    prompts: before.prompts !== after.prompts,
    resources: before.resources !== after.resources,
  };
}
