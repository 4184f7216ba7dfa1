export * from './bucket-store.js';
export * from './request-limiter.js';
