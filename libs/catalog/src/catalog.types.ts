import type { NamespaceMode } from '@switchboard/core';

/**
 * An object exactly as an upstream sent it in a list result. Kept loose on purpose: the
 * gateway must pass through fields it does not know (future spec revisions, vendor `_meta`).
 */
export type Item = Record<string, unknown>;

/** What one available upstream offers right now, after its own pagination was followed. */
export interface UpstreamSnapshot {
  /** Config name, unique. */
  server: string;
  /** The server's alias, else its name; the visible prefix of names and gateway URIs. */
  prefix: string;
  /** The effective namespace mode for this server. */
  namespace: NamespaceMode;
  tools: readonly Item[];
  prompts: readonly Item[];
  resources: readonly Item[];
  resourceTemplates: readonly Item[];
}

/** The four lists a catalog serves, named as in the MCP list results. */
export type ListKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

export const LIST_KINDS: readonly ListKind[] = ['tools', 'prompts', 'resources', 'resourceTemplates'];

export interface NameRoute {
  readonly server: string;
  /** The name the upstream knows. */
  readonly name: string;
}

export interface ResourceRoute {
  readonly server: string;
  /** The URI the upstream knows. */
  readonly uri: string;
}

export interface TemplateRoute {
  readonly server: string;
  /** The URI template the upstream knows. */
  readonly uriTemplate: string;
}

/** Where a public list item came from: what a policy needs to decide whether to show it. */
export interface ListEntryOrigin {
  readonly server: string;
  /** The upstream's own name, URI or URI template. */
  readonly original: string;
}

export interface CatalogPage {
  items: Item[];
  nextCursor?: string;
}

/** Which host-visible lists changed; `resources` covers resources and templates. */
export interface CatalogDiff {
  tools: boolean;
  prompts: boolean;
  resources: boolean;
}

export interface ServerCounts {
  server: string;
  tools: number;
  prompts: number;
  resources: number;
  resourceTemplates: number;
}

/** What one public key means, as a build hands it to the next. */
export interface Claim extends ListEntryOrigin {
  /**
   * Tool and prompt names: the server was given the prefixed form because another server
   * had the bare name, and it never gets the bare name (HeldName.displaced in naming.ts).
   * A URI claim needs no such mark: its key differs from `original` exactly then.
   */
  readonly displaced?: boolean;
}

/**
 * What every public key of a catalog means: tool and prompt names, resource URIs and URI
 * templates to (server, original), and each server's prefix in gateway URIs. The claims of
 * the catalog being replaced are the input that keeps a public key meaning the same thing
 * from one build to the next (see buildCatalog).
 */
export interface CatalogClaims {
  readonly tools: ReadonlyMap<string, Claim>;
  readonly prompts: ReadonlyMap<string, Claim>;
  readonly resources: ReadonlyMap<string, Claim>;
  readonly resourceTemplates: ReadonlyMap<string, Claim>;
  /** server -> its prefix in gateway URIs. */
  readonly uriPrefixes: ReadonlyMap<string, string>;
  /** prefix -> the server that had it in gateway URIs before its alias changed (uri-prefixes.ts). */
  readonly retiredUriPrefixes: ReadonlyMap<string, string>;
}

export const NO_CLAIMS: CatalogClaims = Object.freeze({
  tools: new Map(),
  prompts: new Map(),
  resources: new Map(),
  resourceTemplates: new Map(),
  uriPrefixes: new Map(),
  retiredUriPrefixes: new Map(),
});
