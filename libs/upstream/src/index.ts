export * from './upstream.types.js';
export * from './upstream-connection.js';
export * from './upstream-registry.js';
export * from './backoff.js';
export * from './transports/upstream-transport.js';
export * from './transports/transport-factory.js';
export { StdioUpstreamTransport } from './transports/stdio-transport.js';
export * from './principal-connections.js';
