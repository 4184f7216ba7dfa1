import { secretNamesOf, withSecrets, type ServerConfig } from '@switchboard/config';
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

  valuesFor(principal: string): Record<string, string> {
    let found = this.values.get(principal);
    if (!found) {
      try {
        found = this.source.valuesFor(principal);
      } catch (err) {
        // Undecryptable (the key file was replaced, say): to the gateway the principal has no
        // secrets, which tells them to have the secrets set again; the operator sees why.
        this.logger.error({ principal, err: (err as Error).message }, 'the secrets of a principal cannot be read; set them again');
        found = {};
      }
      this.values.set(principal, found);
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
    let found = this.unusable.get(principal);
    if (!found) {
      const mine = this.valuesFor(principal);
      found = this.servers.filter((s) => secretNamesOf(s).some((name) => mine[name] === undefined)).map((s) => s.name).sort();
      this.unusable.set(principal, found);
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
      // The first whose values can be read (one set with a lost key cannot).
      const principal = this.source.principalsWith(names).find((p) => names.every((n) => this.valuesFor(p)[n] !== undefined));
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

export interface WaitingForSecrets {
  /** Every secret the server refers to, sorted. */
  secrets: readonly string[];
  /** When it was first held back (ISO 8601). */
  since: string;
}
