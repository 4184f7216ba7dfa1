export * from './core.errors.js';
export * from './jsonrpc.js';
export * from './protocol-versions.js';
export * from './ids.js';
export * from './naming.js';
export * from './jsonrpc-peer.js';
export * from './log-levels.js';
export * from './line-splitter.js';
