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

  /** When `keys rotate` replaced it; it serves on until expiresAt (its overlap). */
  @Column({ type: 'integer', name: 'rotated_at', nullable: true })
  rotatedAt!: number | null;

  /** The id of the key that replaced it. */
  @Column({ type: 'integer', name: 'replaced_by', nullable: true })
  replacedBy!: number | null;
}

export const AUTH_ENTITIES = [ApiKeyEntity];
