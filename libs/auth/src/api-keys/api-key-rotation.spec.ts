import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS } from '@switchboard/migrations';
import { migrate, openDatabase, sqliteConnection } from '@switchboard/persistence';
import type { DataSource } from 'typeorm';
import { afterEach, describe, expect, it } from 'vitest';
import { AUTH_ENTITIES } from './api-key.entity.js';
import { ApiKeyNameTakenError, ApiKeyNotRotatableError, ApiKeyStore } from './api-key-store.js';
import { ApiKeyVerifier } from './api-key-verifier.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A store and a verifier on a fresh database; the verifier's clock is `clock.now`. */
async function keys() {
  const file = join(mkdtempSync(join(tmpdir(), 'sb-rotate-')), 'switchboard.sqlite');
  const dataSource = await openDatabase({ file, entities: AUTH_ENTITIES, migrations: MIGRATIONS });
  await migrate(dataSource);
  open.push(dataSource);
  const clock = { now: Date.now() };
  return { store: new ApiKeyStore(dataSource), verifier: new ApiKeyVerifier(sqliteConnection(dataSource), () => clock.now), clock };
}

describe('ApiKeyStore.rotate', () => {
  it('makes a key of the same name and roles; the old one serves until the overlap ends, then is refused as expired', async () => {
    const { store, verifier, clock } = await keys();
    const old = await store.create({ name: 'frank', roles: ['dev', 'ops'] });
    const { key, info, replaced } = await store.rotate(old.info.id, HOUR, clock.now);
    expect(info).toMatchObject({ name: 'frank', roles: ['dev', 'ops'], expiresAt: null, rotatedAt: null, replacedBy: null });
    expect(replaced).toMatchObject({ id: old.info.id, rotatedAt: clock.now, replacedBy: info.id, expiresAt: clock.now + HOUR, revokedAt: null });
    for (const k of [old.key, key]) expect(verifier.verify(k)).toMatchObject({ ok: true, principal: { id: 'frank', roles: ['dev', 'ops'] } });
    clock.now += HOUR;
    expect(verifier.verify(old.key)).toMatchObject({ ok: false, rule: 'auth:expired-key', attributedTo: { id: 'frank' } });
    expect(verifier.lapseOf(old.info.id)).toMatchObject({ rule: 'auth:expired-key' });
    expect(verifier.verify(key)).toMatchObject({ ok: true });
  });

  it('gives the new key the old one\'s lifetime from now, and never lengthens the old one\'s', async () => {
    const { store, clock } = await keys();
    const old = await store.create({ name: 'hal', roles: [], expiresAt: Date.now() + 30 * DAY });
    const lifetime = old.info.expiresAt! - old.info.createdAt;
    clock.now += 29 * DAY;
    const { info, replaced } = await store.rotate(old.info.id, 7 * DAY, clock.now);
    expect(info.expiresAt).toBe(clock.now + lifetime);
    // It expired sooner than the overlap would end.
    expect(replaced.expiresAt).toBe(old.info.expiresAt);
  });

  it('an overlap of 0 ends the old key at once', async () => {
    const { store, verifier, clock } = await keys();
    const old = await store.create({ name: 'ivy', roles: [] });
    await store.rotate(old.info.id, 0, clock.now);
    expect(verifier.verify(old.key)).toMatchObject({ ok: false, rule: 'auth:expired-key' });
  });

  it('leaves the name taken: a plain create is refused during the overlap and after it', async () => {
    const { store, clock } = await keys();
    const old = await store.create({ name: 'jo', roles: [] });
    await store.rotate(old.info.id, HOUR, clock.now);
    await expect(store.create({ name: 'jo', roles: [] })).rejects.toBeInstanceOf(ApiKeyNameTakenError);
    await expect(store.create({ name: 'JO', roles: [] })).rejects.toBeInstanceOf(ApiKeyNameTakenError);
  });

  it('a refused create is told every key that holds the name, newest first, for keys create to say whether they expired', async () => {
    const { store, clock } = await keys();
    const old = await store.create({ name: 'jo', roles: ['dev'], expiresAt: clock.now + HOUR });
    const { info } = await store.rotate(old.info.id, 0, clock.now);
    const gone = await store.create({ name: 'ann', roles: [] });
    await store.revoke(String(gone.info.id));
    await store.create({ name: 'ann', roles: [] });
    const refused = await store.create({ name: 'JO', roles: [] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ApiKeyNameTakenError);
    expect((refused as ApiKeyNameTakenError).keys).toMatchObject([
      { id: info.id, name: 'jo', roles: ['dev'], rotatedAt: null },
      { id: old.info.id, replacedBy: info.id, expiresAt: clock.now },
    ]);
    // A revoked key of the name is not one that holds it.
    expect((await store.create({ name: 'ann', roles: [] }).catch((err: ApiKeyNameTakenError) => err.keys))).toHaveLength(1);
  });

  it('refuses a key that is unknown, revoked, or rotated already', async () => {
    const { store, clock } = await keys();
    const old = await store.create({ name: 'kim', roles: [] });
    await expect(store.rotate(99, HOUR, clock.now)).rejects.toThrow(new ApiKeyNotRotatableError('no key with id 99'));
    const { info } = await store.rotate(old.info.id, HOUR, clock.now);
    await expect(store.rotate(old.info.id, HOUR, clock.now)).rejects.toThrow(`key 'kim' (id ${old.info.id}) was already rotated: its replacement is id ${info.id}`);
    await store.revoke(String(info.id));
    await expect(store.rotate(info.id, HOUR, clock.now)).rejects.toThrow(`key 'kim' (id ${info.id}) was revoked`);
  });

  it('revoke by name revokes every key of the name not revoked, the rotated one too; by id that one', async () => {
    const { store, verifier, clock } = await keys();
    const old = await store.create({ name: 'lee', roles: [] });
    const { key, info } = await store.rotate(old.info.id, HOUR, clock.now);
    expect((await store.revoke('lee')).map((k) => k.id)).toEqual([info.id, old.info.id]);
    for (const k of [old.key, key]) expect(verifier.verify(k)).toMatchObject({ ok: false, rule: 'auth:revoked-key' });
    expect(await store.revoke('lee')).toEqual([]);
    expect((await store.revoke(String(old.info.id))).map((k) => k.id)).toEqual([old.info.id]);
  });
});
