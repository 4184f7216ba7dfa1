export * from './config.types.js';
export { ConfigError, ConfigErrorCode } from './config.errors.js';
export { loadConfig, loadConfigWithWarnings, defaultConfigPath, type LoadedConfig } from './config.loader.js';
export { configJsonSchema } from './config.schema.js';
export { ConfigWatcher, FileWatcher, type ConfigChange, type ConfigWatcherOptions } from './config.watcher.js';
export { parseConfigText, readConfigBytes } from './config.parse.js';
export { formatPath } from './config.errors.js';
export { deepEqual, diffServers, pinnedRootsChanged, sameConnection, type ServerDiff } from './config.diff.js';
export { MissingSecretsError, secretNamesOf, withSecrets } from './config.secrets.js';
