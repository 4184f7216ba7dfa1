export * from './logger.js';
export * from './nest-logger.js';
export { formatLogLine } from './text-log-format.js';
