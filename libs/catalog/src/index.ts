export * from './catalog.types.js';
export { Catalog, diff } from './catalog.js';
export type { CatalogFingerprints } from './fingerprint.js';
export type { ListFilter } from './sorted-list.js';
export { buildCatalog } from './build-catalog.js';
export { CatalogStore, type CatalogListener } from './catalog-store.js';
export { GATEWAY_URI_SCHEME, isGatewayUri, parseGatewayUri, toGatewayUri, type GatewayUri } from './resource-uri.js';
export { compileUriTemplate, type UriTemplateMatcher } from './uri-template.js';
