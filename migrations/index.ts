import { CreateAuditLog1795219200000 } from './1795219200000-create-audit-log.js';
import { SlimAuditIndexes1795222800000 } from './1795222800000-slim-audit-indexes.js';
import { AuditRecordAsJson1795226400000 } from './1795226400000-audit-record-as-json.js';
import { CreateApiKeys1795230000000 } from './1795230000000-create-api-keys.js';
import { CreateToolPins1795233600000 } from './1795233600000-create-tool-pins.js';
import { CreatePrincipalSecrets1795237200000 } from './1795237200000-create-principal-secrets.js';
import { CreateAuditJournalMarks1795240800000 } from './1795240800000-create-audit-journal-marks.js';
import { PrincipalIndexInIdOrder1795244400000 } from './1795244400000-principal-index-in-id-order.js';
import { ApiKeyRotation1795248000000 } from './1795248000000-api-key-rotation.js';

/** Every migration, oldest first. Listed by hand: globs differ between src and dist. */
export const MIGRATIONS = [
  CreateAuditLog1795219200000,
  SlimAuditIndexes1795222800000,
  AuditRecordAsJson1795226400000,
  CreateApiKeys1795230000000,
  CreateToolPins1795233600000,
  CreatePrincipalSecrets1795237200000,
  CreateAuditJournalMarks1795240800000,
  PrincipalIndexInIdOrder1795244400000,
  ApiKeyRotation1795248000000,
];
