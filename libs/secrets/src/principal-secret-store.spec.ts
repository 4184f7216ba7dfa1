import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_CALLER_NAME_CHARS, MAX_PRINCIPAL_CHARS } from '@switchboard/core';
import { MIGRATIONS } from '@switchboard/migrations';
import { migrate, openDatabase, sqliteConnection, type SqliteConnection } from '@switchboard/persistence';
import type { DataSource } from 'typeorm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PrincipalSecretStore } from './principal-secret-store.js';
import { SecretErrorCode } from './secrets.errors.js';

let open: DataSource[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
  vi.restoreAllMocks();
});

/** A migrated database in a fresh temp dir, and a store over it with a fresh key. */
async function fresh(key = randomBytes(32)): Promise<{ store: PrincipalSecretStore; db: SqliteConnection; key: Buffer }> {
  const file = join(mkdtempSync(join(tmpdir(), 'sb-secrets-')), 'switchboard.sqlite');
  const ds = await openDatabase({ file, entities: [], migrations: MIGRATIONS });
  await migrate(ds);
  open.push(ds);
  const db = sqliteConnection(ds);
  return { store: new PrincipalSecretStore(db, key), db, key };
}

const TOKEN = 'ghp_plaintext-that-must-not-be-stored-in-clear';
const rawValue = (db: SqliteConnection, principal: string, name: string) =>
  (db.prepare('SELECT value FROM principal_secret WHERE principal = ? AND name = ?').get(principal, name) as { value: Buffer }).value;

describe('PrincipalSecretStore', () => {
  it('sets, reads back, replaces and deletes a value per principal', async () => {
    const { store } = await fresh();
    store.set('alice', 'GITHUB_TOKEN', TOKEN);
    store.set('alice', 'SLACK_TOKEN', 'xoxb-1');
    store.set('bob', 'GITHUB_TOKEN', 'bob-token');
    expect(store.valuesFor('alice')).toEqual({ GITHUB_TOKEN: TOKEN, SLACK_TOKEN: 'xoxb-1' });
    expect(store.valuesFor('bob')).toEqual({ GITHUB_TOKEN: 'bob-token' });
    expect(store.valuesFor('carol')).toEqual({});

    store.set('alice', 'GITHUB_TOKEN', 'rotated');
    expect(store.valuesFor('alice').GITHUB_TOKEN).toBe('rotated');

    expect(store.delete('alice', 'SLACK_TOKEN')).toBe(true);
    expect(store.delete('alice', 'SLACK_TOKEN')).toBe(false);
    expect(store.valuesFor('alice')).toEqual({ GITHUB_TOKEN: 'rotated' });
  });

  it('keeps multi-byte and multi-line values intact', async () => {
    const { store } = await fresh();
    const pem = '-----BEGIN KEY-----\nhé ✓\n-----END KEY-----\n';
    store.set('alice', 'PEM', pem);
    expect(store.valuesFor('alice').PEM).toBe(pem);
  });

  it('lists by principal then name, with update times and never the values', async () => {
    const { store } = await fresh();
    const before = Date.now();
    store.set('bob', 'B', 'v1');
    store.set('alice', 'Z', 'v2');
    store.set('alice', 'A', 'v3');
    const all = store.list();
    expect(all.map((s) => [s.principal, s.name])).toEqual([['alice', 'A'], ['alice', 'Z'], ['bob', 'B']]);
    for (const s of all) {
      expect(Object.keys(s).sort()).toEqual(['name', 'principal', 'updatedAt']);
      expect(s.updatedAt).toBeGreaterThanOrEqual(before);
    }
    expect(store.list('alice').map((s) => s.name)).toEqual(['A', 'Z']);
    expect(store.list('nobody')).toEqual([]);
  });

  it('does not store values in clear', async () => {
    const { store, db } = await fresh();
    store.set('alice', 'GITHUB_TOKEN', TOKEN);
    const raw = rawValue(db, 'alice', 'GITHUB_TOKEN');
    expect(raw.includes(Buffer.from(TOKEN))).toBe(false);
    expect(raw.includes(Buffer.from(TOKEN.slice(0, 12)))).toBe(false);
    // Fresh IV each time: the same value set twice is stored differently.
    store.set('alice', 'GITHUB_TOKEN', TOKEN);
    expect(rawValue(db, 'alice', 'GITHUB_TOKEN').equals(raw)).toBe(false);
  });

  it('a value copied into another row does not decrypt there', async () => {
    const { store, db } = await fresh();
    store.set('alice', 'GITHUB_TOKEN', TOKEN);
    store.set('mallory', 'GITHUB_TOKEN', 'mallory-own');
    store.set('mallory', 'OTHER', 'x');
    db.prepare('UPDATE principal_secret SET value = ? WHERE principal = ? AND name = ?').run(rawValue(db, 'alice', 'GITHUB_TOKEN'), 'mallory', 'GITHUB_TOKEN');
    expect(() => store.valuesFor('mallory')).toThrow(/GITHUB_TOKEN.*'mallory'/);
    // Same principal, another name: also refused.
    db.prepare('UPDATE principal_secret SET value = ? WHERE principal = ? AND name = ?').run(rawValue(db, 'alice', 'GITHUB_TOKEN'), 'mallory', 'OTHER');
    db.prepare('DELETE FROM principal_secret WHERE principal = ? AND name = ?').run('mallory', 'GITHUB_TOKEN');
    expect(() => store.valuesFor('mallory')).toThrow(/OTHER/);
    expect(store.valuesFor('alice')).toEqual({ GITHUB_TOKEN: TOKEN });
  });

  it('another key fails with an error naming the principal and the secret, not the value', async () => {
    const { store, db } = await fresh();
    store.set('alice', 'GITHUB_TOKEN', TOKEN);
    const wrongKey = new PrincipalSecretStore(db, randomBytes(32));
    let error: (Error & { code?: string }) | undefined;
    try {
      wrongKey.valuesFor('alice');
    } catch (err) {
      error = err as Error;
    }
    expect(error?.code).toBe(SecretErrorCode.Undecryptable);
    expect(error?.message).toMatch(/secret GITHUB_TOKEN of principal 'alice' cannot be decrypted/);
    expect(error?.message).not.toContain(TOKEN);
  });

  it('refuses bad names, principals, values and keys with a clear message', async () => {
    const { store, db } = await fresh();
    expect(() => store.set('alice', '1ABC', 'v')).toThrow(/secret name '1ABC' must be/);
    expect(() => store.set('alice', 'A-B', 'v')).toThrow(/secret name/);
    expect(() => store.set('alice', `A${'b'.repeat(64)}`, 'v')).toThrow(/secret name/);
    expect(() => store.set('', 'A', 'v')).toThrow(/principal must not be empty/);
    expect(() => store.set('p'.repeat(MAX_CALLER_NAME_CHARS + 1), 'A', 'v')).toThrow(`at most ${MAX_CALLER_NAME_CHARS} characters`);
    expect(() => store.set('alice', 'A', '')).toThrow(/value of A must not be empty/);
    expect(() => store.set('alice', 'A', 'x'.repeat(64 * 1024 + 1))).toThrow(/at most 65536/);
    store.set('p'.repeat(200), `A${'b'.repeat(63)}`, 'x'.repeat(64 * 1024));
    // The longest principal claim a token may carry, as its caller name: whoever can sign in can have secrets.
    const tokenUser = `jwt:${'u'.repeat(MAX_PRINCIPAL_CHARS)}`;
    store.set(tokenUser, 'A', 'v');
    expect(store.valuesFor(tokenUser)).toEqual({ A: 'v' });
    expect(() => store.delete('alice', 'no-such')).toThrow(/secret name/);
    expect(() => new PrincipalSecretStore(db, randomBytes(16))).toThrow(/32 bytes/);
  });

  it('loads a key given as a function only to seal or open a value: listing and deleting need none', async () => {
    const { db, key } = await fresh();
    const loadKey = vi.fn(() => key);
    const store = new PrincipalSecretStore(db, loadKey);
    expect(store.list()).toEqual([]);
    expect(store.delete('alice', 'A')).toBe(false);
    expect(loadKey).not.toHaveBeenCalled();
    store.set('alice', 'A', 'v');
    expect(store.valuesFor('alice')).toEqual({ A: 'v' });
    expect(loadKey).toHaveBeenCalledTimes(1);
  });

  it("keeps a key's secrets and a token user's of the same name apart; key:NAME is the key's name", async () => {
    const { store } = await fresh();
    store.set('key:alice', 'T', 'for-the-key');
    store.set('jwt:alice', 'T', 'for-the-token');
    expect(store.valuesFor('alice')).toEqual({ T: 'for-the-key' });
    expect(store.valuesFor('jwt:alice')).toEqual({ T: 'for-the-token' });
    expect(store.list('alice').map((s) => s.principal)).toEqual(['alice']);
    expect(() => store.set('oidc:alice', 'T', 'v')).toThrow(/jwt:NAME/);
  });

  it('principalsWith: the principals that have every one of the names', async () => {
    const { store } = await fresh();
    store.set('carol', 'GITHUB_TOKEN', 'c');
    store.set('alice', 'GITHUB_TOKEN', 'a');
    store.set('alice', 'JIRA_TOKEN', 'a');
    store.set('bob', 'JIRA_TOKEN', 'b');
    expect(store.principalsWith(['GITHUB_TOKEN'])).toEqual(['alice', 'carol']);
    expect(store.principalsWith(['GITHUB_TOKEN', 'JIRA_TOKEN'])).toEqual(['alice']);
    expect(store.principalsWith(['JIRA_TOKEN', 'JIRA_TOKEN'])).toEqual(['alice', 'bob']);
    expect(store.principalsWith(['GITHUB_TOKEN', 'NOBODY_HAS'])).toEqual([]);
    expect(store.principalsWith([])).toEqual(['alice', 'bob', 'carol']);
  });

  it('fingerprint changes on set, on replace (even within the same millisecond) and on delete', async () => {
    const { store, db, key } = await fresh();
    vi.spyOn(Date, 'now').mockReturnValue(1_795_237_200_000);
    const empty = store.fingerprint();
    store.set('alice', 'A', 'v1');
    const afterSet = store.fingerprint();
    expect(afterSet).not.toBe(empty);
    expect(store.fingerprint()).toBe(afterSet);
    // Another process sees the same fingerprint.
    expect(new PrincipalSecretStore(db, key).fingerprint()).toBe(afterSet);

    store.set('alice', 'A', 'v2');
    const afterReplace = store.fingerprint();
    expect(afterReplace).not.toBe(afterSet);

    store.delete('alice', 'A');
    expect(store.fingerprint()).toBe(empty);
  });
});
