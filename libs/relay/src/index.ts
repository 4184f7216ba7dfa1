export * from './session.js';
export * from './relay.types.js';
export * from './catalog-sync.js';
export * from './forwarder.js';
export * from './subscriptions.js';
export * from './notification-fanout.js';
export * from './gateway-dispatcher.js';
export { advertisedCapabilities } from './handlers/lifecycle.js';
export type { AuditFacts } from './audit/audit-facts.js';
