import { createHash } from 'node:crypto';
import { restartNeeded, secretNamesOf, secretValueProblem, withSecrets, type ServerConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import type { SecretValues, UpstreamRegistry } from '@switchboard/upstream';

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
  /** Per per-principal server: whose secrets its list-reading connection runs with, and the config made of them. */
  private discovery = new Map<string, Discovery>();
  /**
   * Per server, the principals whose secrets its list-reading connection failed to connect
   * with, and a digest of those secrets: they are skipped until the digest moves (the
   * secrets were set again) or the config is reloaded.
   */
  private failed = new Map<string, Map<string, string>>();

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
   * secrets of the first principal, by name, who has all it needs and whose secrets have not
   * failed to connect (discoveryConnectFailed); once connected, it keeps that principal while
   * they have the secrets. When every one's have failed, it keeps the last tried, and stays
   * down as any server that cannot connect. Until someone has the secrets,
   * the server stays off and says so.
   */
  discoveryServers(servers: readonly ServerConfig[]): ServerConfig[] {
    const before = this.waiting;
    const chosen = this.discovery;
    this.waiting = new Map();
    this.discovery = new Map();
    return servers.map((server) => {
      if (!server.enabled || server.isolation !== 'per-principal') return server;
      const names = secretNamesOf(server);
      if (names.length === 0) return server;
      const candidates = this.candidates(names, server.transport);
      if (candidates.length === 0) {
        this.logger.warn(
          { upstream: server.name, secrets: names },
          `no principal has the secrets ${names.join(', ')} yet, so '${server.name}' is not started; ` +
            `set ${names.length > 1 ? 'them' : 'it'} with: ${names.map((name) => `switchboard secrets set --principal P ${name} < FILE`).join('; ')}`,
        );
        // Since when it waits: a poll that changes nothing for it must not move the time.
        this.waiting.set(server.name, { secrets: names, since: before.get(server.name)?.since ?? new Date().toISOString() });
        return { ...server, enabled: false };
      }
      const previous = chosen.get(server.name);
      const failed = this.failedFor(server.name, names, candidates);
      const kept = previous && candidates.includes(previous.principal) ? previous.principal : undefined;
      // One that connected stays (a principal whose secrets were fixed, or who sorts before it,
      // does not restart it); all failed, the one running goes on retrying.
      const principal =
        (kept !== undefined && previous!.connected && !failed.has(kept) ? kept : undefined) ??
        candidates.find((p) => !failed.has(p)) ??
        kept ??
        candidates[0]!;
      const config = withSecrets(server, this.valuesFor(principal));
      // Still connected with the same secrets, or about to connect with others (restartNeeded).
      const connected = previous !== undefined && previous.principal === principal && previous.connected && !restartNeeded(previous.config, config);
      this.discovery.set(server.name, { principal, config, names, connected });
      return config;
    });
  }

  /**
   * The list-reading connection of `server`, running `config`, failed to connect (its
   * connect attempt, not the loss of a working connection). When it ran with the secrets
   * discoveryServers chose and had not connected with them yet, that principal is skipped
   * from now on; true when another principal's secrets are left to try (discoveryServers
   * then names them), false when nothing changes.
   */
  discoveryConnectFailed(server: string, config: ServerConfig, lastError?: string): boolean {
    const current = this.discovery.get(server);
    if (!current || current.config !== config || current.connected) return false;
    const failed = this.failed.get(server) ?? new Map<string, string>();
    if (failed.has(current.principal)) return false;
    failed.set(current.principal, this.digest(current.principal, current.names));
    this.failed.set(server, failed);
    const next = this.candidates(current.names, config.transport).find((p) => !failed.has(p));
    const tried = [...failed.keys()].sort();
    if (next !== undefined) {
      this.logger.warn(
        { upstream: server, principal: current.principal, next, err: lastError },
        `'${server}' could not connect with the secrets of principal '${current.principal}'; its lists are read with those of '${next}' instead`,
      );
    } else {
      this.logger.warn(
        { upstream: server, principal: current.principal, tried, err: lastError },
        `'${server}' could not connect with the secrets of principal '${current.principal}', and no other principal's are left to try ` +
          `(tried: ${tried.join(', ')}); it stays down until one's secrets are set again`,
      );
    }
    return next !== undefined;
  }

  /** The list-reading connection of `server`, running `config`, connected: a later loss is no failure of its secrets. */
  discoveryConnected(server: string, config: ServerConfig): void {
    const current = this.discovery.get(server);
    if (current && current.config === config) current.connected = true;
  }

  /** Per server, the principals whose secrets its list-reading connection failed with, sorted. */
  discoveryFailures(): ReadonlyMap<string, readonly string[]> {
    const out = new Map<string, readonly string[]>();
    for (const [server, failed] of this.failed) if (failed.size > 0) out.set(server, [...failed.keys()].sort());
    return out;
  }

  /** A reloaded config: every principal's secrets are tried again. */
  forgetDiscoveryFailures(): void {
    this.failed.clear();
  }

  /**
   * The principals who have every secret `names`, by name, with values that can be read (one
   * set with a lost key cannot) and carried where they go (no NUL byte; no line break in a header).
   */
  private candidates(names: readonly string[], transport: ServerConfig['transport']): string[] {
    const inHeader = transport !== 'stdio';
    return this.source.principalsWith([...names]).filter((p) => {
      const values = this.valuesFor(p);
      return names.every((n) => values[n] !== undefined && secretValueProblem(values[n], inHeader) === undefined);
    });
  }

  /** The failures of `server` that still hold: those of principals whose secrets are still those that failed. */
  private failedFor(server: string, names: readonly string[], candidates: readonly string[]): ReadonlyMap<string, string> {
    const failed = this.failed.get(server);
    if (!failed) return new Map();
    for (const [principal, digest] of failed) {
      if (!candidates.includes(principal) || this.digest(principal, names) !== digest) failed.delete(principal);
    }
    if (failed.size === 0) this.failed.delete(server);
    return failed;
  }

  /** Tells whether a principal's secrets changed, without keeping them. */
  private digest(principal: string, names: readonly string[]): string {
    const values = this.valuesFor(principal);
    return createHash('sha256').update(JSON.stringify(names.map((n) => values[n] ?? null))).digest('hex');
  }

  /** The enabled per-principal servers that are not started because no principal has their secrets yet. */
  waitingForSecrets(): ReadonlyMap<string, WaitingForSecrets> {
    return this.waiting;
  }
}

/**
 * Tells `secrets` how the registry's connections fare, which for a per-principal server is
 * its list-reading one: `chooseAgain` (apply the config again) when one failed to connect
 * with a principal's secrets and another principal's are left to try.
 */
export function reportDiscoveryConnects(
  registry: Pick<UpstreamRegistry, 'addListener' | 'get'>,
  secrets: PrincipalSecrets,
  chooseAgain: () => void,
): () => void {
  return registry.addListener({
    stateChanged: (server, state, previous) => {
      const connection = registry.get(server);
      if (!connection) return;
      if (state === 'ready') secrets.discoveryConnected(server, connection.config);
      // Out of the connection's own state change: the new choice stops and replaces it.
      else if (state === 'down' && previous === 'connecting' && secrets.discoveryConnectFailed(server, connection.config, connection.status().lastError)) {
        queueMicrotask(chooseAgain);
      }
    },
  });
}

const NONE: readonly string[] = [];

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

interface Discovery {
  principal: string;
  /** The server's config with the principal's secrets, as the registry was handed it. */
  config: ServerConfig;
  names: readonly string[];
  /** Connected with these secrets at least once. */
  connected: boolean;
}

export interface WaitingForSecrets {
  /** Every secret the server refers to, sorted. */
  secrets: readonly string[];
  /** When it was first held back (ISO 8601). */
  since: string;
}
