import {
  assignPublicNames,
  DEFAULT_NAMING,
  sanitizePrefix,
  shortHash,
  type NameRequest,
  type NamingOptions,
} from '@switchboard/core';
import { Catalog } from './catalog.js';
import type { Item, ListKind, NameRoute, ResourceRoute, ServerCounts, TemplateRoute, UpstreamSnapshot } from './catalog.types.js';
import { catalogFingerprints } from './fingerprint.js';
import { isGatewayUri, toGatewayUri } from './resource-uri.js';
import { compareKeys, SortedList, type ListEntry } from './sorted-list.js';
import { compileUriTemplate } from './uri-template.js';

/** An upstream item that has its key, after duplicates within the upstream were dropped. */
interface Keyed {
  key: string;
  item: Item;
}

const NOUNS: Record<ListKind, string> = {
  tools: 'tool',
  prompts: 'prompt',
  resources: 'resource',
  resourceTemplates: 'resource template',
};

/**
 * Merges what the available upstreams offer into one catalog. `snapshots` must be in config
 * order: it decides who keeps a contested name or URI. Pure: the snapshots are not touched
 * (public items are shallow copies) and the same input always gives the same catalog.
 */
export function buildCatalog(snapshots: readonly UpstreamSnapshot[], naming: NamingOptions = DEFAULT_NAMING): Catalog {
  const warnings: string[] = [];
  const upstreams = uniqueServers(snapshots, warnings);
  const keyed = (kind: ListKind, field: string) => upstreams.map((u) => uniqueByKey(u, kind, field, warnings));

  const tools = buildNamedList(upstreams, keyed('tools', 'name'), naming);
  const prompts = buildNamedList(upstreams, keyed('prompts', 'name'), naming);
  const uriPrefixes = assignUriPrefixes(upstreams);
  const templatesKeyed = keyed('resourceTemplates', 'uriTemplate');
  const resources = buildUriList(upstreams, keyed('resources', 'uri'), 'uri', uriPrefixes, (server, uri): ResourceRoute => ({ server, uri }));
  const templates = buildUriList(upstreams, templatesKeyed, 'uriTemplate', uriPrefixes, (server, uriTemplate): TemplateRoute => ({ server, uriTemplate }));

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
    serverByUriPrefix: new Map([...uriPrefixes].map(([server, prefix]) => [prefix, server])),
    listedUris: resources.publicByServer,
    templateMatchers: upstreams.flatMap((u, i) =>
      templatesKeyed[i].map(({ key }) => Object.freeze({ server: u.server, pattern: compileUriTemplate(key) })),
    ),
    counts: Object.freeze(counts),
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
}

function buildNamedList(upstreams: readonly UpstreamSnapshot[], keyed: Keyed[][], naming: NamingOptions): BuiltList<NameRoute> {
  // Sorting within each upstream makes the names independent of the order an upstream
  // happens to list its tools in: assignPublicNames settles rare clashes first come, first served.
  const sorted = keyed.map((items) => [...items].sort((a, b) => compareKeys(a.key, b.key)));
  const requests: NameRequest[] = upstreams.flatMap((u, i) =>
    sorted[i].map(({ key }) => ({ server: u.server, prefix: u.prefix, mode: u.namespace, name: key })),
  );
  const names = assignPublicNames(requests, naming);
  const built: BuiltList<NameRoute> = { entries: [], routes: new Map(), perServer: new Map() };
  let n = 0;
  upstreams.forEach((u, i) => {
    for (const { key, item } of sorted[i]) {
      const name = names[n++];
      built.entries.push(Object.freeze({ key: name, item: Object.freeze({ ...item, name }), server: u.server, original: key }));
      built.routes.set(name, Object.freeze({ server: u.server, name: key }));
    }
    built.perServer.set(u.server, sorted[i].length);
  });
  return built;
}

/**
 * The URI prefix of each server in gateway URIs: its sanitized alias or name, made unique
 * so that a gateway URI always parses back to one server.
 */
function assignUriPrefixes(upstreams: readonly UpstreamSnapshot[]): Map<string, string> {
  const prefixes = new Map<string, string>();
  const taken = new Set<string>();
  for (const u of upstreams) {
    const base = sanitizePrefix(u.prefix) || sanitizePrefix(u.server) || shortHash(u.server);
    let prefix = base;
    for (let attempt = 0; taken.has(prefix); attempt++) prefix = `${base}-${shortHash(u.server, String(attempt))}`;
    taken.add(prefix);
    prefixes.set(u.server, prefix);
  }
  return prefixes;
}

interface BuiltUriList<R> extends BuiltList<R> {
  /** server -> (upstream key -> public key). */
  publicByServer: Map<string, Map<string, string>>;
}

/**
 * Resources and templates keep their URI unless an earlier server (config order) lists the
 * same one. URIs already in the gateway's scheme (a Switchboard used as an upstream) are
 * always rewritten, so that every public `switchboard://` URI is one this gateway issued.
 */
function buildUriList<R>(
  upstreams: readonly UpstreamSnapshot[],
  keyed: Keyed[][],
  field: 'uri' | 'uriTemplate',
  uriPrefixes: ReadonlyMap<string, string>,
  route: (server: string, original: string) => R,
): BuiltUriList<R> {
  const owner = new Map<string, string>();
  upstreams.forEach((u, i) => {
    for (const { key } of keyed[i]) if (!owner.has(key)) owner.set(key, u.server);
  });
  const built: BuiltUriList<R> = { entries: [], routes: new Map(), perServer: new Map(), publicByServer: new Map() };
  upstreams.forEach((u, i) => {
    const publicKeys = new Map<string, string>();
    for (const { key, item } of keyed[i]) {
      const kept = owner.get(key) === u.server && !isGatewayUri(key);
      const publicKey = kept ? key : toGatewayUri(uriPrefixes.get(u.server)!, key);
      built.entries.push(Object.freeze({ key: publicKey, item: Object.freeze({ ...item, [field]: publicKey }), server: u.server, original: key }));
      built.routes.set(publicKey, Object.freeze(route(u.server, key)));
      publicKeys.set(key, publicKey);
    }
    built.perServer.set(u.server, keyed[i].length);
    built.publicByServer.set(u.server, publicKeys);
  });
  return built;
}
