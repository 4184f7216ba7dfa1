export * from './policy-document.js';
export * from './compiled-policy.js';
export * from './policy-loader.js';
export * from './policy-engine.js';
export * from './pinning/pin-store.js';
export * from './pinning/pin-guard.js';
export * from './pinning/tool-fingerprint.js';
export * from './approvals/approval-book.js';
