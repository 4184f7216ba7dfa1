import { Column, Entity, PrimaryColumn, ViewColumn, ViewEntity } from 'typeorm';
import type { AuditDecision, AuditOutcome } from './audit.types.js';

/**
 * The `audit_record` view: one column per field of the rows stored in `audit_entry` (id,
 * time and principal as indexed columns, the rest as one JSON record; see the third
 * migration). The schema is made by migrations/; this mapping is for queries. Rows are
 * written by the writer's prepared INSERT, never through TypeORM.
 */
@ViewEntity({ name: 'audit_record' })
export class AuditRecordEntity {
  @ViewColumn()
  id!: number;

  @ViewColumn()
  at!: number;

  @ViewColumn()
  principal!: string;

  @ViewColumn({ name: 'auth_method' })
  authMethod!: string;

  @ViewColumn({ name: 'session_id' })
  sessionId!: string | null;

  @ViewColumn()
  transport!: string | null;

  @ViewColumn({ name: 'client_name' })
  clientName!: string | null;

  @ViewColumn({ name: 'client_version' })
  clientVersion!: string | null;

  @ViewColumn({ name: 'protocol_version' })
  protocolVersion!: string | null;

  @ViewColumn()
  upstream!: string | null;

  @ViewColumn()
  method!: string;

  @ViewColumn()
  name!: string | null;

  @ViewColumn({ name: 'original_name' })
  originalName!: string | null;

  @ViewColumn()
  arguments!: string | null;

  @ViewColumn({ name: 'arguments_truncated' })
  argumentsTruncated!: boolean;

  @ViewColumn({ name: 'arguments_digest' })
  argumentsDigest!: string | null;

  @ViewColumn()
  decision!: AuditDecision;

  @ViewColumn()
  rule!: string | null;

  @ViewColumn()
  outcome!: AuditOutcome | null;

  @ViewColumn({ name: 'error_code' })
  errorCode!: number | null;

  @ViewColumn({ name: 'error_message' })
  errorMessage!: string | null;

  @ViewColumn({ name: 'latency_ms' })
  latencyMs!: number | null;

  @ViewColumn({ name: 'response_bytes' })
  responseBytes!: number | null;

  @ViewColumn({ name: 'request_id' })
  requestId!: string | null;

  @ViewColumn({ name: 'trace_id' })
  traceId!: string | null;

  @ViewColumn({ name: 'prev_hash' })
  prevHash!: string;

  @ViewColumn()
  hash!: string;
}

/**
 * `audit_chain`: where the chain starts once retention has pruned its oldest rows (the id
 * and hash of the last pruned row), so the remaining rows still verify.
 */
@Entity({ name: 'audit_chain' })
export class AuditChainEntity {
  @PrimaryColumn({ type: 'text' })
  key!: string;

  @Column({ type: 'integer', name: 'anchor_id' })
  anchorId!: number;

  @Column({ type: 'text', name: 'anchor_hash' })
  anchorHash!: string;

  @Column({ type: 'integer', name: 'pruned_rows' })
  prunedRows!: number;
}

export const AUDIT_ENTITIES = [AuditRecordEntity, AuditChainEntity];
