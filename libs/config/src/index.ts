export * from './config.types.js';
export { ConfigError, ConfigErrorCode } from './config.errors.js';
export { loadConfig, loadConfigWithWarnings, defaultConfigPath, type LoadedConfig } from './config.loader.js';
export { configJsonSchema } from './config.schema.js';
export { ConfigWatcher, type ConfigChange, type ConfigWatcherOptions } from './config.watcher.js';
export { deepEqual, diffServers, type ServerDiff } from './config.diff.js';
