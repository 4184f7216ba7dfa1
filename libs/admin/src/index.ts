export * from './admin-options.js';
export * from './admin.module.js';
export * from './audit-page-params.js';
export { INBOX_COOKIE } from './inbox/inbox-sessions.js';
export type { AdminErrorBody } from './json-response.js';
