import { MissingSecretsError, UnusableSecretError, secretNamesOf, withSecrets, type ServerConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import type { SecretValues } from '@switchboard/upstream';

/** What the gateway reads of the secret store (libs/secrets). */
export interface SecretSource {
  valuesFor(principal: string): Record<string, string>;
  principalsWith(names: string[]): string[];
  /** Changes whenever a secret is set or deleted, by any process. */
  fingerprint(): string;
}

/**
 * How many principals' secrets (and unusable servers) are kept at once, the least recently
 * used going first. The caches are keyed by caller, and a shared endpoint meets new callers for
 * as long as it runs (every subject its issuer signs tokens for), so unbounded they held every
 * principal that ever listed, for weeks, with its secrets decrypted. One past the bound is read
 * from the store again: an indexed query and a decryption per secret.
 */
export const MAX_CACHED_PRINCIPALS = 1024;

/**
 * The secret store as the gateway uses it: values cached per principal (a request must not
 * decrypt on every call) and dropped whenever the store's fingerprint moves, which `poll`
 * checks. `switchboard secrets set` in another process thus takes effect within a poll.
 */
export class PrincipalSecrets implements SecretValues {
  private readonly values = new Map<string, Record<string, string>>();
  private readonly unusable = new Map<string, readonly string[]>();
  private lastFingerprint: string;
  private servers: readonly ServerConfig[] = [];
  /** The per-principal servers the last discoveryServers held back, with what they wait for. */
  private waiting = new Map<string, WaitingForSecrets>();

  constructor(
    private readonly source: SecretSource,
    private readonly logger: Logger,
  ) {
    this.lastFingerprint = source.fingerprint();
  }

  /** For tests: how many principals the caches hold. */
  get cachedPrincipals(): { values: number; unusable: number } {
    return { values: this.values.size, unusable: this.unusable.size };
  }

  valuesFor(principal: string): Record<string, string> {
    let found = recentlyUsed(this.values, principal);
    if (!found) {
      try {
        found = this.source.valuesFor(principal);
      } catch (err) {
        // Undecryptable (the key file was replaced, say): to the gateway the principal has no
        // secrets, which tells them to have the secrets set again; the operator sees why.
        this.logger.error({ principal, err: (err as Error).message }, 'the secrets of a principal cannot be read; set them again');
        found = {};
      }
      keepBounded(this.values, principal, found);
    }
    return found;
  }

  /** True when the store changed since the last poll (the caches are then dropped). */
  poll(): boolean {
    const now = this.source.fingerprint();
    if (now === this.lastFingerprint) return false;
    this.lastFingerprint = now;
    this.values.clear();
    this.unusable.clear();
    return true;
  }

  /** The config's servers; per-principal ones are the ones that matter here. */
  setServers(servers: readonly ServerConfig[]): void {
    this.servers = servers.filter((s) => s.enabled && s.isolation === 'per-principal');
    this.unusable.clear();
  }

  /** The per-principal servers this principal lacks a secret for, sorted. */
  unusableServers(principal: string): readonly string[] {
    // Asked at every list of every caller: with no per-principal server there is nothing to
    // lack, and nothing to read or keep for them.
    if (this.servers.length === 0) return NONE;
    let found = recentlyUsed(this.unusable, principal);
    if (!found) {
      const mine = this.valuesFor(principal);
      found = this.servers.filter((s) => secretNamesOf(s).some((name) => mine[name] === undefined)).map((s) => s.name).sort();
      keepBounded(this.unusable, principal, found);
    }
    return found;
  }

  /**
   * The servers as the shared registry runs them. A per-principal server's shared connection
   * only reads its lists (tools, prompts, resources) for the catalog; it is opened with the
   * secrets of the first principal, by name, who has all it needs. Until someone does, the
   * server stays off and says so.
   */
  discoveryServers(servers: readonly ServerConfig[]): ServerConfig[] {
    const before = this.waiting;
    this.waiting = new Map();
    return servers.map((server) => {
      if (!server.enabled || server.isolation !== 'per-principal') return server;
      const names = secretNamesOf(server);
      if (names.length === 0) return server;
      // The first whose values can be read (one set with a lost key cannot) and used (no NUL byte, say).
      const principal = this.source.principalsWith(names).find((p) => usable(server, this.valuesFor(p)));
      if (principal === undefined) {
        this.logger.warn(
          { upstream: server.name, secrets: names },
          `no principal has the secrets ${names.join(', ')} yet, so '${server.name}' is not started; ` +
            `set ${names.length > 1 ? 'them' : 'it'} with: ${names.map((name) => `switchboard secrets set --principal P ${name} < FILE`).join('; ')}`,
        );
        // Since when it waits: a poll that changes nothing for it must not move the time.
        this.waiting.set(server.name, { secrets: names, since: before.get(server.name)?.since ?? new Date().toISOString() });
        return { ...server, enabled: false };
      }
      return withSecrets(server, this.valuesFor(principal));
    });
  }

  /** The enabled per-principal servers that are not started because no principal has their secrets yet. */
  waitingForSecrets(): ReadonlyMap<string, WaitingForSecrets> {
    return this.waiting;
  }
}

const NONE: readonly string[] = [];

/** Whether these values fill every secret the server needs, each with a value it can carry. */
function usable(server: ServerConfig, values: Readonly<Record<string, string>>): boolean {
  try {
    withSecrets(server, values);
    return true;
  } catch (err) {
    if (err instanceof MissingSecretsError || err instanceof UnusableSecretError) return false;
    throw err;
  }
}

/** The cached entry, moved to the newest end of the map's order (which keepBounded evicts from the other end). */
function recentlyUsed<V>(cache: Map<string, V>, principal: string): V | undefined {
  const found = cache.get(principal);
  if (found !== undefined) {
    cache.delete(principal);
    cache.set(principal, found);
  }
  return found;
}

function keepBounded<V>(cache: Map<string, V>, principal: string, value: V): void {
  if (cache.size >= MAX_CACHED_PRINCIPALS) cache.delete(cache.keys().next().value!);
  cache.set(principal, value);
}

export interface WaitingForSecrets {
  /** Every secret the server refers to, sorted. */
  secrets: readonly string[];
  /** When it was first held back (ISO 8601). */
  since: string;
}
