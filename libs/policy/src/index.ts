export * from './policy-document.js';
export * from './compiled-policy.js';
export * from './policy-loader.js';
export * from './policy-engine.js';
