import { CreateAuditLog1795219200000 } from './1795219200000-create-audit-log.js';
import { SlimAuditIndexes1795222800000 } from './1795222800000-slim-audit-indexes.js';

/** Every migration, oldest first. Listed by hand: globs differ between src and dist. */
export const MIGRATIONS = [CreateAuditLog1795219200000, SlimAuditIndexes1795222800000];
