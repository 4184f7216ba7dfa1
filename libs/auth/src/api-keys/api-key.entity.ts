import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** The `api_key` table (made by migrations/); for `switchboard keys` and its queries. */
@Entity({ name: 'api_key' })
export class ApiKeyEntity {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text' })
  prefix!: string;

  @Column({ type: 'text', name: 'key_hash' })
  keyHash!: string;

  /** JSON array of role names. */
  @Column({ type: 'text' })
  roles!: string;

  @Column({ type: 'integer', name: 'created_at' })
  createdAt!: number;

  @Column({ type: 'integer', name: 'expires_at', nullable: true })
  expiresAt!: number | null;

  @Column({ type: 'integer', name: 'revoked_at', nullable: true })
  revokedAt!: number | null;

  @Column({ type: 'integer', name: 'last_used_at', nullable: true })
  lastUsedAt!: number | null;
}

export const AUTH_ENTITIES = [ApiKeyEntity];
