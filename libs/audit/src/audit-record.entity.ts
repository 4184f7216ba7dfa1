import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { AuditDecision, AuditOutcome } from './audit.types.js';

/**
 * The `audit_record` table. The schema itself is made by migrations/; this mapping is for
 * queries. Ids are assigned by the writer inside its transaction (they are hashed into the
 * chain), so the column is a plain primary key here.
 */
@Entity({ name: 'audit_record' })
@Index('audit_record_at', ['at'])
@Index('audit_record_principal', ['principal', 'at'])
export class AuditRecordEntity {
  @PrimaryColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'integer' })
  at!: number;

  @Column({ type: 'text' })
  principal!: string;

  @Column({ type: 'text', name: 'auth_method' })
  authMethod!: string;

  @Column({ type: 'text', name: 'session_id', nullable: true })
  sessionId!: string | null;

  @Column({ type: 'text', nullable: true })
  transport!: string | null;

  @Column({ type: 'text', name: 'client_name', nullable: true })
  clientName!: string | null;

  @Column({ type: 'text', name: 'client_version', nullable: true })
  clientVersion!: string | null;

  @Column({ type: 'text', name: 'protocol_version', nullable: true })
  protocolVersion!: string | null;

  @Column({ type: 'text', nullable: true })
  upstream!: string | null;

  @Column({ type: 'text' })
  method!: string;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  @Column({ type: 'text', name: 'original_name', nullable: true })
  originalName!: string | null;

  @Column({ type: 'text', nullable: true })
  arguments!: string | null;

  @Column({ type: 'boolean', name: 'arguments_truncated' })
  argumentsTruncated!: boolean;

  @Column({ type: 'text', name: 'arguments_digest', nullable: true })
  argumentsDigest!: string | null;

  @Column({ type: 'text' })
  decision!: AuditDecision;

  @Column({ type: 'text', nullable: true })
  rule!: string | null;

  @Column({ type: 'text', nullable: true })
  outcome!: AuditOutcome | null;

  @Column({ type: 'integer', name: 'error_code', nullable: true })
  errorCode!: number | null;

  @Column({ type: 'text', name: 'error_message', nullable: true })
  errorMessage!: string | null;

  @Column({ type: 'real', name: 'latency_ms', nullable: true })
  latencyMs!: number | null;

  @Column({ type: 'integer', name: 'response_bytes', nullable: true })
  responseBytes!: number | null;

  @Column({ type: 'text', name: 'request_id', nullable: true })
  requestId!: string | null;

  @Column({ type: 'text', name: 'trace_id', nullable: true })
  traceId!: string | null;

  @Column({ type: 'text', name: 'prev_hash' })
  prevHash!: string;

  @Column({ type: 'text' })
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
