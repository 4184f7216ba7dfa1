import { IsNull, Raw, type DataSource } from 'typeorm';
import { ApiKeyEntity } from './api-key.entity.js';
import { displayPrefix, hashApiKey, newApiKey } from './key-material.js';

/** A key as `keys list` shows it: never the key itself. */
export interface ApiKeyInfo {
  id: number;
  name: string;
  prefix: string;
  roles: string[];
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

export class ApiKeyNameTakenError extends Error {
  constructor(name: string) {
    super(`a key named '${name}' already exists (revoke it first, or pick another name)`);
  }
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
const ROLE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/** Problems with a new key's name and roles, each a sentence; empty when they are fine. */
export function checkKeyFields(name: string, roles: readonly string[]): string[] {
  const problems: string[] = [];
  if (!NAME.test(name)) problems.push(`name '${name}': use 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit`);
  // `keys revoke 2` means the key with id 2: a name of digits alone would be taken for an id.
  else if (/^\d+$/.test(name)) problems.push(`name '${name}': must not be digits alone (keys revoke reads those as an id)`);
  for (const role of roles) {
    if (!ROLE.test(role)) problems.push(`role '${role}': use 1-64 letters, digits, '.', '_', ':' or '-', starting with a letter or digit`);
  }
  return problems;
}

/**
 * Managing keys (`switchboard keys`): create, list, revoke. Keys are checked on every
 * request by ApiKeyVerifier, which reads the same table; a revocation here takes effect on
 * the daemon's next request.
 */
export class ApiKeyStore {
  constructor(private readonly dataSource: DataSource) {}

  /** Creates a key; the key itself is returned here once and stored only as a hash. */
  async create(fields: { name: string; roles: readonly string[]; expiresAt?: number }): Promise<{ key: string; info: ApiKeyInfo }> {
    const problems = checkKeyFields(fields.name, fields.roles);
    if (problems.length > 0) throw new Error(problems.join('; '));
    const repository = this.dataSource.getRepository(ApiKeyEntity);
    // Without regard to case: policies and rate limits match a caller's name so (callerKey),
    // and `Alice` would share `alice`'s entry under users: and her buckets. Key names are
    // ASCII (NAME), which SQLite's lower() covers.
    const taken = await repository.findOneBy({ name: Raw((column) => `lower(${column}) = lower(:name)`, { name: fields.name }), revokedAt: IsNull() });
    if (taken) throw new ApiKeyNameTakenError(taken.name);
    const key = newApiKey();
    const saved = await repository.save(
      repository.create({
        name: fields.name,
        prefix: displayPrefix(key),
        keyHash: hashApiKey(key),
        roles: JSON.stringify([...new Set(fields.roles)]),
        createdAt: Date.now(),
        expiresAt: fields.expiresAt ?? null,
        revokedAt: null,
        lastUsedAt: null,
      }),
    );
    return { key, info: infoOf(saved) };
  }

  /** Every key, newest first, revoked ones included (they say so). */
  async list(): Promise<ApiKeyInfo[]> {
    const rows = await this.dataSource.getRepository(ApiKeyEntity).find({ order: { id: 'DESC' } });
    return rows.map(infoOf);
  }

  /** Revokes the active key with this name, or the key with this id; undefined if none. */
  async revoke(nameOrId: string): Promise<ApiKeyInfo | undefined> {
    const repository = this.dataSource.getRepository(ApiKeyEntity);
    const found = /^\d+$/.test(nameOrId)
      ? await repository.findOneBy({ id: Number(nameOrId) })
      : await repository.findOneBy({ name: nameOrId, revokedAt: IsNull() });
    if (!found) return undefined;
    if (found.revokedAt === null) {
      found.revokedAt = Date.now();
      await repository.update({ id: found.id }, { revokedAt: found.revokedAt });
    }
    return infoOf(found);
  }
}

function infoOf(row: ApiKeyEntity): ApiKeyInfo {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    roles: JSON.parse(row.roles) as string[],
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
    lastUsedAt: row.lastUsedAt,
  };
}
