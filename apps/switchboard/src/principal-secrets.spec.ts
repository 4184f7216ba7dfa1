import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type ServerConfig } from '@switchboard/config';
import { MIGRATIONS } from '@switchboard/migrations';
import { silentLogger } from '@switchboard/observability';
import { migrate, openDatabase, sqliteConnection } from '@switchboard/persistence';
import { PrincipalSecretStore } from '@switchboard/secrets';
import type { DataSource } from 'typeorm';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CACHED_PRINCIPALS, PrincipalSecrets } from './principal-secrets.js';

let open: DataSource[] = [];
let dirs: string[] = [];
afterEach(async () => {
  for (const ds of open) await ds.destroy();
  open = [];
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

/** A real store over a migrated database in a fresh temp dir, and the servers of `yaml`. */
async function fresh(yaml: string): Promise<{ store: PrincipalSecretStore; servers: ServerConfig[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-principal-secrets-'));
  dirs.push(dir);
  const ds = await openDatabase({ file: join(dir, 'switchboard.sqlite'), entities: [], migrations: MIGRATIONS });
  await migrate(ds);
  open.push(ds);
  writeFileSync(join(dir, 'gw.yaml'), yaml);
  return { store: new PrincipalSecretStore(sqliteConnection(ds), randomBytes(32)), servers: loadConfig(join(dir, 'gw.yaml'), {}).servers };
}

const SHARED_ONLY = ['mcpServers:', '  local:', '    command: node'].join('\n');
const PER_PRINCIPAL = ['mcpServers:', '  gh:', '    url: https://example.test/mcp', '    isolation: per-principal', '    headers: { Authorization: "Bearer ${secret:GH_TOKEN}" }'].join('\n');

/** What every list of a new caller asks (principalListView), for `count` callers never seen again. */
function listAs(secrets: PrincipalSecrets, count: number, prefix: string): void {
  for (let i = 0; i < count; i++) secrets.unusableServers(`${prefix}${i}`);
}

describe('PrincipalSecrets: what is kept per caller', () => {
  it('keeps nothing for the callers of a gateway with no per-principal server', async () => {
    const { store, servers } = await fresh(SHARED_ONLY);
    const secrets = new PrincipalSecrets(store, silentLogger());
    secrets.setServers(servers);
    listAs(secrets, 500, 'jwt:user-');
    expect(secrets.unusableServers('jwt:someone')).toEqual([]);
    expect(secrets.cachedPrincipals).toEqual({ values: 0, unusable: 0 });
  });

  it('keeps at most MAX_CACHED_PRINCIPALS callers, the least recently used going first, and still answers for those it let go', async () => {
    const { store, servers } = await fresh(PER_PRINCIPAL);
    store.set('alice', 'GH_TOKEN', 'alice-token');
    const secrets = new PrincipalSecrets(store, silentLogger());
    secrets.setServers(servers);
    expect(secrets.unusableServers('alice')).toEqual([]);
    listAs(secrets, MAX_CACHED_PRINCIPALS + 300, 'jwt:churn-');
    expect(secrets.cachedPrincipals).toEqual({ values: MAX_CACHED_PRINCIPALS, unusable: MAX_CACHED_PRINCIPALS });
    // alice was let go long ago, and is read from the store again with the same answers.
    expect(secrets.valuesFor('alice')).toEqual({ GH_TOKEN: 'alice-token' });
    expect(secrets.unusableServers('alice')).toEqual([]);
    expect(secrets.unusableServers('jwt:churn-0')).toEqual(['gh']);

    // A caller in use stays: bob, asked between every newcomer, outlives them all.
    store.set('bob', 'GH_TOKEN', 'bob-token');
    for (let i = 0; i < MAX_CACHED_PRINCIPALS + 10; i++) {
      expect(secrets.unusableServers('bob')).toEqual([]);
      secrets.unusableServers(`jwt:later-${i}`);
    }
    store.delete('bob', 'GH_TOKEN');
    // The store changed but was not polled: a cached answer is still the one given.
    expect(secrets.unusableServers('bob')).toEqual([]);
    expect(secrets.cachedPrincipals.unusable).toBe(MAX_CACHED_PRINCIPALS);
  });
});

describe('PrincipalSecrets: the principal whose secrets read the lists', () => {
  it('passes over one whose value the server cannot carry (a line break in a header), rather than fail the server for everyone', async () => {
    const { store, servers } = await fresh(PER_PRINCIPAL);
    store.set('alice', 'GH_TOKEN', 'alice-token\r\nX-Injected: 1');
    store.set('bob', 'GH_TOKEN', 'bob-token');
    const secrets = new PrincipalSecrets(store, silentLogger());
    const [gh] = secrets.discoveryServers(servers);
    expect(gh).toMatchObject({ enabled: true, headers: { Authorization: 'Bearer bob-token' } });
  });
});

describe("PrincipalSecrets: whose secrets a per-principal server's lists are read with", () => {
  const tokenOf = (config: ServerConfig) => (config as { headers?: Record<string, string> }).headers?.['Authorization'];

  it("tries the next principal's when one's fail to connect, skips those until they change, and keeps the last when all failed", async () => {
    const { store, servers } = await fresh(PER_PRINCIPAL);
    store.set('0junk', 'GH_TOKEN', 'junk-token');
    store.set('alice', 'GH_TOKEN', 'alice-token');
    const secrets = new PrincipalSecrets(store, silentLogger());
    secrets.setServers(servers);
    const first = secrets.discoveryServers(servers)[0]!;
    expect(tokenOf(first)).toBe('Bearer junk-token');

    // A stale config (a connection already replaced) says nothing of the current choice.
    expect(secrets.discoveryConnectFailed('gh', { ...first })).toBe(false);
    expect(secrets.discoveryConnectFailed('gh', first)).toBe(true);
    const second = secrets.discoveryServers(servers)[0]!;
    expect(tokenOf(second)).toBe('Bearer alice-token');

    // A working connection lost later is no failure of its secrets.
    secrets.discoveryConnected('gh', second);
    expect(secrets.discoveryConnectFailed('gh', second)).toBe(false);
    expect(secrets.discoveryFailures()).toEqual(new Map([['gh', ['0junk']]]));

    // Applied again with the same secrets, it is still the connection that connected.
    const again = secrets.discoveryServers(servers)[0]!;
    expect(secrets.discoveryConnectFailed('gh', again)).toBe(false);

    // One that connected stays, even when one who sorts before it may be tried again (a reload).
    secrets.forgetDiscoveryFailures();
    expect(tokenOf(secrets.discoveryServers(servers)[0]!)).toBe('Bearer alice-token');

    // alice's secret rotated: a new connection, which fails; 0junk's are tried again and fail
    // too; none are left, and the last tried stays.
    store.set('alice', 'GH_TOKEN', 'alice-token-2');
    secrets.poll();
    const third = secrets.discoveryServers(servers)[0]!;
    expect(tokenOf(third)).toBe('Bearer alice-token-2');
    expect(secrets.discoveryConnectFailed('gh', third)).toBe(true);
    const fourth = secrets.discoveryServers(servers)[0]!;
    expect(tokenOf(fourth)).toBe('Bearer junk-token');
    expect(secrets.discoveryConnectFailed('gh', fourth)).toBe(false);
    expect(tokenOf(secrets.discoveryServers(servers)[0]!)).toBe('Bearer junk-token');
    expect(secrets.discoveryFailures()).toEqual(new Map([['gh', ['0junk', 'alice']]]));

    // Secrets set again (the same value counts as unchanged): that principal is tried again.
    store.set('alice', 'GH_TOKEN', 'alice-token-2');
    secrets.poll();
    expect(tokenOf(secrets.discoveryServers(servers)[0]!)).toBe('Bearer junk-token');
    expect(secrets.discoveryFailures()).toEqual(new Map([['gh', ['0junk', 'alice']]]));
    store.set('0junk', 'GH_TOKEN', 'junk-token-2');
    secrets.poll();
    expect(tokenOf(secrets.discoveryServers(servers)[0]!)).toBe('Bearer junk-token-2');
    expect(secrets.discoveryFailures()).toEqual(new Map([['gh', ['alice']]]));
  });
});
