import { assignPublicNames, DEFAULT_NAMING, MAX_URI_CHARS, type NameRequest, type NamingOptions } from '@switchboard/core';
import { Catalog } from './catalog.js';
import {
  NO_CLAIMS,
  type CatalogClaims,
  type Claim,
  type Item,
  type ListKind,
  type NameRoute,
  type ResourceRoute,
  type ServerCounts,
  type TemplateRoute,
  type UpstreamSnapshot,
} from './catalog.types.js';
import { catalogFingerprints } from './fingerprint.js';
import { isGatewayUri, toGatewayUri } from './resource-uri.js';
import { compareKeys, SortedList, type ListEntry } from './sorted-list.js';
import { assignUriPrefixes } from './uri-prefixes.js';
import { compileUriTemplate } from './uri-template.js';

/** An upstream item that has its key, after duplicates within the upstream were dropped. */
interface Keyed {
  key: string;
  item: Item;
}

/**
 * How many keys a served server may have given up (items it no longer lists, names it has
 * under another form since a config change) that stay reserved for it, per list, and how
 * many gateway URI prefixes it had before alias changes: the newest are kept, so one that
 * renames its items all the time does not grow the claims forever.
 */
export const MAX_GIVEN_UP_PER_SERVER = 1000;

const NOUNS: Record<ListKind, string> = {
  tools: 'tool',
  prompts: 'prompt',
  resources: 'resource',
  resourceTemplates: 'resource template',
};

/**
 * Merges what the available upstreams offer into one catalog. `snapshots` must be in config
 * order. `held` is what the public keys meant before (the claims of the catalog this one
 * replaces, limited to servers still configured), and every held key stays its holder's:
 * served while the holder lists the item under it, reserved while the holder is down
 * (absent from `snapshots`), no longer lists the item, or has it under another key since a
 * config change. So a key never changes meaning under a host that holds it. A server that
 * was given the prefixed name or gateway URI because another server had the bare one keeps
 * that form. Config order decides only the keys nobody holds. Pure: the snapshots are not
 * touched (public items are shallow copies) and the same input always gives the same catalog.
 */
export function buildCatalog(
  snapshots: readonly UpstreamSnapshot[],
  naming: NamingOptions = DEFAULT_NAMING,
  held: CatalogClaims = NO_CLAIMS,
): Catalog {
  const warnings: string[] = [];
  const upstreams = uniqueServers(snapshots, warnings);
  const present = new Set(upstreams.map((u) => u.server));
  const keyed = (kind: ListKind, field: string) => upstreams.map((u) => uniqueByKey(u, kind, field, warnings));

  const tools = buildNamedList(upstreams, keyed('tools', 'name'), naming, held.tools);
  const prompts = buildNamedList(upstreams, keyed('prompts', 'name'), naming, held.prompts);
  const { current: uriPrefixes, retired: retiredUriPrefixes } = assignUriPrefixes(
    upstreams,
    held.uriPrefixes,
    held.retiredUriPrefixes,
    MAX_GIVEN_UP_PER_SERVER,
  );
  const templatesKeyed = keyed('resourceTemplates', 'uriTemplate');
  const uriList = { uriPrefixes, warnings };
  const resources = buildUriList(upstreams, keyed('resources', 'uri'), 'uri', { ...uriList, held: held.resources }, (server, uri): ResourceRoute => ({ server, uri }));
  const templates = buildUriList(upstreams, templatesKeyed, 'uriTemplate', { ...uriList, held: held.resourceTemplates }, (server, uriTemplate): TemplateRoute => ({ server, uriTemplate }));
  const claimsOf = (kind: ListKind, built: BuiltList<unknown>) => handedOn(built.claims, held[kind], present);

  const lists = {
    tools: new SortedList(tools.entries),
    prompts: new SortedList(prompts.entries),
    resources: new SortedList(resources.entries),
    resourceTemplates: new SortedList(templates.entries),
  };
  const counts: ServerCounts[] = upstreams.map((u) => Object.freeze({
    server: u.server,
    tools: tools.perServer.get(u.server) ?? 0,
    prompts: prompts.perServer.get(u.server) ?? 0,
    resources: resources.perServer.get(u.server) ?? 0,
    resourceTemplates: templates.perServer.get(u.server) ?? 0,
  }));

  return new Catalog({
    servers: Object.freeze(upstreams.map((u) => u.server)),
    warnings: Object.freeze(warnings),
    lists,
    toolRoutes: tools.routes,
    promptRoutes: prompts.routes,
    resourceRoutes: resources.routes,
    templateRoutes: templates.routes,
    uriPrefixes,
    serverByUriPrefix: new Map([...retiredUriPrefixes, ...[...uriPrefixes].map(([server, prefix]) => [prefix, server] as const)]),
    listedUris: resources.publicByServer,
    keptOffUris: resources.keptOff,
    templateMatchers: upstreams.flatMap((u, i) =>
      templatesKeyed[i].map(({ key }) => Object.freeze({ server: u.server, pattern: compileUriTemplate(key) })),
    ),
    counts: Object.freeze(counts),
    claims: Object.freeze({
      tools: claimsOf('tools', tools),
      prompts: claimsOf('prompts', prompts),
      resources: claimsOf('resources', resources),
      resourceTemplates: claimsOf('resourceTemplates', templates),
      uriPrefixes,
      retiredUriPrefixes,
    }),
    fingerprints: catalogFingerprints({
      tools: lists.tools.items,
      prompts: lists.prompts.items,
      resources: lists.resources.items,
      resourceTemplates: lists.resourceTemplates.items,
    }),
  });
}

function uniqueServers(snapshots: readonly UpstreamSnapshot[], warnings: string[]): UpstreamSnapshot[] {
  const seen = new Set<string>();
  return snapshots.filter((s) => {
    if (!seen.has(s.server)) return seen.add(s.server);
    warnings.push(`upstream "${s.server}" appears more than once; only its first snapshot is served`);
    return false;
  });
}

/** Within one upstream the first item with a key wins, as a host would see if it deduped. */
function uniqueByKey(upstream: UpstreamSnapshot, kind: ListKind, field: string, warnings: string[]): Keyed[] {
  const seen = new Set<string>();
  const out: Keyed[] = [];
  for (const item of upstream[kind]) {
    const key = item?.[field];
    if (typeof key !== 'string' || key === '') {
      warnings.push(`upstream "${upstream.server}" lists a ${NOUNS[kind]} without a ${field}; it is not served`);
    } else if (seen.has(key)) {
      warnings.push(`upstream "${upstream.server}" lists ${NOUNS[kind]} "${key}" more than once; only the first is served`);
    } else {
      seen.add(key);
      out.push({ key, item });
    }
  }
  return out;
}

interface BuiltList<R> {
  entries: ListEntry[];
  routes: Map<string, R>;
  perServer: Map<string, number>;
  /** What each published key means. */
  claims: Map<string, Claim>;
}

/**
 * The claims a build hands to the next: every key it published, and before them every held
 * key it did not, which stays reserved for its holder (see buildCatalog). Held order has the
 * oldest given-up keys first, so a served server keeps its newest MAX_GIVEN_UP_PER_SERVER;
 * a server that is down keeps all of its keys.
 */
function handedOn(published: ReadonlyMap<string, Claim>, held: ReadonlyMap<string, Claim>, present: ReadonlySet<string>): Map<string, Claim> {
  const newestFirst = [...held].filter(([key]) => !published.has(key)).reverse();
  const counted = new Map<string, number>();
  const kept = newestFirst.filter(([, claim]) => {
    if (!present.has(claim.server)) return true;
    const n = (counted.get(claim.server) ?? 0) + 1;
    counted.set(claim.server, n);
    return n <= MAX_GIVEN_UP_PER_SERVER;
  });
  return new Map([...kept.reverse(), ...published]);
}

function buildNamedList(
  upstreams: readonly UpstreamSnapshot[],
  keyed: Keyed[][],
  naming: NamingOptions,
  held: ReadonlyMap<string, Claim>,
): BuiltList<NameRoute> {
  // Sorting within each upstream makes the names independent of the order an upstream
  // happens to list its tools in: assignPublicNames settles rare clashes first come, first served.
  const sorted = keyed.map((items) => [...items].sort((a, b) => compareKeys(a.key, b.key)));
  const requests: NameRequest[] = upstreams.flatMap((u, i) =>
    sorted[i].map(({ key }) => ({ server: u.server, prefix: u.prefix, mode: u.namespace, name: key })),
  );
  const heldNames = new Map(
    [...held].map(([publicName, claim]) => [publicName, { server: claim.server, name: claim.original, displaced: claim.displaced }]),
  );
  const names = assignPublicNames(requests, naming, heldNames);
  const built: BuiltList<NameRoute> = { entries: [], routes: new Map(), perServer: new Map(), claims: new Map() };
  let n = 0;
  upstreams.forEach((u, i) => {
    for (const { key, item } of sorted[i]) {
      const { name, displaced } = names[n++];
      built.entries.push(Object.freeze({ key: name, item: Object.freeze({ ...item, name }), server: u.server, original: key }));
      built.routes.set(name, Object.freeze({ server: u.server, name: key }));
      built.claims.set(name, Object.freeze({ server: u.server, original: key, ...(displaced && { displaced }) }));
    }
    built.perServer.set(u.server, sorted[i].length);
  });
  return built;
}

interface BuiltUriList<R> extends BuiltList<R> {
  /** server -> (upstream key -> public key). */
  publicByServer: Map<string, Map<string, string>>;
  /** Bare key -> the servers that have it under a gateway URI because another server had it. */
  keptOff: Map<string, Set<string>>;
}

/**
 * Resources and templates keep their URI unless another server holds it (see buildCatalog)
 * or, when nobody does, an earlier server (config order) lists the same one. URIs already
 * in the gateway's scheme (a Switchboard used as an upstream) are always rewritten, so that
 * every public `switchboard://` URI is one this gateway issued. A held URI nobody lists now
 * (its holder is down or no longer lists it) still routes to its holder, which answers the
 * read ("upstream unavailable", or its own "not found"), so it is not taken by a template
 * or the sole resource server meanwhile. A server given the gateway URI of a URI another
 * server had keeps that form, as a prefixed name is kept (HeldName.displaced): the bare URI
 * may still mean the other server's resource to a host, so it is never routed to it.
 * An item whose gateway URI is longer than a host may send (MAX_URI_CHARS) is left out, with
 * a warning: the upstreams' lists leave out such URIs of their own (list-items.ts), but a
 * URI within the limit can pass it once wrapped, and a listed URI no host could read or
 * complete would only mislead.
 */
function buildUriList<R>(
  upstreams: readonly UpstreamSnapshot[],
  keyed: Keyed[][],
  field: 'uri' | 'uriTemplate',
  { uriPrefixes, held, warnings }: { uriPrefixes: ReadonlyMap<string, string>; held: ReadonlyMap<string, Claim>; warnings: string[] },
  route: (server: string, original: string) => R,
): BuiltUriList<R> {
  // A URI in the gateway's scheme is rewritten whoever lists it: no one was kept off it.
  const keptOff = new Map<string, Set<string>>();
  for (const [uri, claim] of held) {
    if (uri === claim.original || isGatewayUri(claim.original)) continue;
    keptOff.set(claim.original, (keptOff.get(claim.original) ?? new Set()).add(claim.server));
  }
  // A held bare URI is its holder's, listed or not, up or down; config order settles the rest.
  const owner = new Map<string, string>();
  for (const [uri, claim] of held) if (uri === claim.original) owner.set(uri, claim.server);
  upstreams.forEach((u, i) => {
    for (const { key } of keyed[i]) if (!owner.has(key) && !keptOff.get(key)?.has(u.server)) owner.set(key, u.server);
  });
  const built: BuiltUriList<R> = { entries: [], routes: new Map(), perServer: new Map(), claims: new Map(), publicByServer: new Map(), keptOff };
  upstreams.forEach((u, i) => {
    const publicKeys = new Map<string, string>();
    for (const { key, item } of keyed[i]) {
      const kept = owner.get(key) === u.server && !isGatewayUri(key);
      const publicKey = kept ? key : toGatewayUri(uriPrefixes.get(u.server)!, key);
      if (publicKey.length > MAX_URI_CHARS) {
        warnings.push(
          `upstream "${u.server}" lists ${NOUNS[field === 'uri' ? 'resources' : 'resourceTemplates']} ${JSON.stringify(key.slice(0, 80))} ` +
            `whose gateway ${field} would be ${publicKey.length} characters, and a host may send at most ${MAX_URI_CHARS}; it is not served`,
        );
        continue;
      }
      built.entries.push(Object.freeze({ key: publicKey, item: Object.freeze({ ...item, [field]: publicKey }), server: u.server, original: key }));
      built.routes.set(publicKey, Object.freeze(route(u.server, key)));
      built.claims.set(publicKey, Object.freeze({ server: u.server, original: key }));
      publicKeys.set(key, publicKey);
    }
    built.perServer.set(u.server, publicKeys.size);
    built.publicByServer.set(u.server, publicKeys);
  });
  for (const [publicKey, claim] of held) {
    if (!built.routes.has(publicKey)) built.routes.set(publicKey, Object.freeze(route(claim.server, claim.original)));
  }
  return built;
}
