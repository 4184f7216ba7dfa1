import { API_KEY_NAME, API_KEY_NAME_RULE } from '@switchboard/core';
import { In, IsNull, Raw, type DataSource, type Repository } from 'typeorm';
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
  /** When `keys rotate` replaced it, and by which key's id; null for a key never rotated. */
  rotatedAt: number | null;
  replacedBy: number | null;
}

export class ApiKeyNameTakenError extends Error {
  /**
   * `keys` are the keys that hold the name (not revoked), newest first: when every one has
   * expired, the name looks free to whoever typed it, and keys create says why it is not.
   */
  constructor(readonly keys: readonly ApiKeyInfo[]) {
    super(`a key named '${keys[0].name}' already exists (revoke it first, or pick another name)`);
  }
}

/** Why `keys rotate` cannot replace a key: there is none with the id, or it is revoked or rotated already. */
export class ApiKeyNotRotatableError extends Error {}

const ROLE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/** Problems with a new key's name and roles, each a sentence; empty when they are fine. */
export function checkKeyFields(name: string, roles: readonly string[]): string[] {
  const problems: string[] = [];
  if (!API_KEY_NAME.test(name)) problems.push(`name '${name}': use ${API_KEY_NAME_RULE}`);
  // `keys revoke 2` means the key with id 2: a name of digits alone would be taken for an id.
  else if (/^\d+$/.test(name)) problems.push(`name '${name}': must not be digits alone (keys revoke reads those as an id)`);
  for (const role of roles) {
    if (!ROLE.test(role)) problems.push(`role '${role}': use 1-64 ASCII letters (A-Z, a-z), digits, '.', '_', ':' or '-', starting with a letter or digit`);
  }
  return problems;
}

/**
 * Managing keys (`switchboard keys`): create, list, rotate, revoke. Keys are checked on every
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
    const taken = await repository.find({ where: { name: Raw((column) => `lower(${column}) = lower(:name)`, { name: fields.name }), revokedAt: IsNull() }, order: { id: 'DESC' } });
    if (taken.length > 0) throw new ApiKeyNameTakenError(taken.map(infoOf));
    const roles = JSON.stringify([...new Set(fields.roles)]);
    const { key, saved } = await insertKey(repository, { name: fields.name, roles, createdAt: Date.now(), expiresAt: fields.expiresAt ?? null });
    return { key, info: infoOf(saved) };
  }

  /**
   * Replaces the key with this id by a new one of the same name and roles, without downtime:
   * the old key serves on for `overlapMs` (0: not at all), and is then refused as expired, as
   * any expired key is, so the daemon ends its sessions through the same credential check.
   * Its expiry only ever comes sooner. The new key lives as long as the old one was made to
   * (its expiry minus its creation) from `now`, or does not expire if the old one did not.
   */
  async rotate(id: number, overlapMs: number, now = Date.now()): Promise<{ key: string; info: ApiKeyInfo; replaced: ApiKeyInfo }> {
    return this.dataSource.transaction(async (manager) => {
      const repository = manager.getRepository(ApiKeyEntity);
      const old = await repository.findOneBy({ id });
      if (!old) throw new ApiKeyNotRotatableError(`no key with id ${id}`);
      if (old.revokedAt !== null) throw new ApiKeyNotRotatableError(`key '${old.name}' (id ${id}) was revoked`);
      if (old.rotatedAt !== null) throw new ApiKeyNotRotatableError(`key '${old.name}' (id ${id}) was already rotated: its replacement is id ${old.replacedBy}`);
      const lifetime = old.expiresAt === null ? null : old.expiresAt - old.createdAt;
      const overlapEnd = now + overlapMs;
      old.expiresAt = old.expiresAt === null ? overlapEnd : Math.min(old.expiresAt, overlapEnd);
      old.rotatedAt = now;
      // First out of the name's unique index (rotated_at), so that the new key may join it.
      await repository.update({ id }, { rotatedAt: old.rotatedAt, expiresAt: old.expiresAt });
      const { key, saved } = await insertKey(repository, { name: old.name, roles: old.roles, createdAt: now, expiresAt: lifetime === null ? null : now + lifetime });
      old.replacedBy = saved.id;
      await repository.update({ id }, { replacedBy: saved.id });
      return { key, info: infoOf(saved), replaced: infoOf(old) };
    });
  }

  /** Every key, newest first, revoked ones included (they say so). */
  async list(): Promise<ApiKeyInfo[]> {
    const rows = await this.dataSource.getRepository(ApiKeyEntity).find({ order: { id: 'DESC' } });
    return rows.map(infoOf);
  }

  /**
   * Revokes every key not revoked with this name (a rotated key in its overlap and its
   * replacement both: the principal's access ends), or the key with this id, in whatever
   * state; newest first, none if there is no such key.
   */
  async revoke(nameOrId: string): Promise<ApiKeyInfo[]> {
    const repository = this.dataSource.getRepository(ApiKeyEntity);
    const found = /^\d+$/.test(nameOrId)
      ? await repository.findBy({ id: Number(nameOrId) })
      : await repository.find({ where: { name: nameOrId, revokedAt: IsNull() }, order: { id: 'DESC' } });
    const now = Date.now();
    const fresh = found.filter((row) => row.revokedAt === null);
    for (const row of fresh) row.revokedAt = now;
    if (fresh.length > 0) await repository.update({ id: In(fresh.map((row) => row.id)) }, { revokedAt: now });
    return found.map(infoOf);
  }
}

/** A new key's row, stored with the key's hash only; the key itself is returned to be shown once. */
async function insertKey(
  repository: Repository<ApiKeyEntity>,
  fields: { name: string; roles: string; createdAt: number; expiresAt: number | null },
): Promise<{ key: string; saved: ApiKeyEntity }> {
  const key = newApiKey();
  const row = { ...fields, prefix: displayPrefix(key), keyHash: hashApiKey(key), revokedAt: null, lastUsedAt: null, rotatedAt: null, replacedBy: null };
  return { key, saved: await repository.save(repository.create(row)) };
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
    rotatedAt: row.rotatedAt,
    replacedBy: row.replacedBy,
  };
}
