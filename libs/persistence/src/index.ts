export * from './backup.js';
export * from './database.js';
export * from './migrate.js';
export * from './persistence.errors.js';
export * from './schema-state.js';
