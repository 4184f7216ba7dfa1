export * from './downstream.types.js';
export * from './gateway-session.js';
export * from './message-intake.js';
export { StreamableHttpService } from './http/streamable-http.service.js';
export { LegacySseService } from './http/legacy-sse.service.js';
export { McpHttpRoutes } from './http/mcp-routes.js';
export {
  refusedForeign,
  httpRefusal,
  authenticated,
  type ForeignAnswer,
  type HttpRefusal,
  type RefusalListener,
  type RequestAuthenticator,
  type UnlistedValue,
} from './http/request-guard.js';
export { UnlistedWarnings } from './http/unlisted-warnings.js';
export { StdioFront } from './stdio/stdio-front.js';
export { stdioPrincipal } from './principals.js';
export { CREDENTIAL_CHECK_MS } from './http/credential-check.js';
