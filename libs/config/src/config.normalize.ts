import { dirname, resolve } from 'node:path';
import { resolveTransport } from './config.rules.js';
import type { ConfigInput } from './config.schema.js';
import type { ServerInput } from './config.schema.servers.js';
import type { GatewayConfig, ListLimits, ServerConfig, Timeouts } from './config.types.js';

/**
 * The validated file to the typed config the daemon uses: defaults are already filled by
 * the schema; here paths become absolute, server timeouts and list limits are merged over
 * the top-level ones and `disabled` becomes `enabled`. Only called on input that passed every rule.
 */
export function normalizeConfig(file: string, input: ConfigInput): GatewayConfig {
  const base = dirname(file);
  const { shutdownMs, sessionIdleMs, ...requestTimeouts } = input.timeouts;
  const servers = Object.entries(input.mcpServers ?? input.servers ?? {}).map(([name, server]) =>
    normalizeServer(name, server, base, requestTimeouts, input.lists),
  );
  return {
    source: file,
    listen: { ...input.listen },
    dataDir: resolve(base, input.dataDir),
    namespace: input.namespace,
    separator: input.separator,
    pageSize: input.pageSize,
    lists: { ...input.lists },
    timeouts: { ...requestTimeouts, shutdownMs, sessionIdleMs },
    security: { allowedHosts: [...input.security.allowedHosts], allowedOrigins: [...input.security.allowedOrigins] },
    log: { level: input.log.level, format: input.log.format },
    auth: {
      mode: input.auth.mode,
      authorizationServers: [...input.auth.authorizationServers],
      ...(input.auth.jwt && { jwt: { ...input.auth.jwt, algorithms: [...input.auth.jwt.algorithms], claims: { ...input.auth.jwt.claims } } }),
    },
    policy: {
      ...(input.policy.file !== undefined && { file: resolve(base, input.policy.file) }),
      ...(input.policy.defaultEffect !== undefined && { defaultEffect: input.policy.defaultEffect }),
    },
    rateLimits: {
      ...(input.rateLimits.perPrincipal && { perPrincipal: { ...input.rateLimits.perPrincipal } }),
      ...(input.rateLimits.perPrincipalServer && { perPrincipalServer: { ...input.rateLimits.perPrincipalServer } }),
      ...(input.rateLimits.perPrincipalTool && { perPrincipalTool: { ...input.rateLimits.perPrincipalTool } }),
      ...(input.rateLimits.upstreamConcurrency !== undefined && { upstreamConcurrency: input.rateLimits.upstreamConcurrency }),
      ...(input.rateLimits.perPrincipalConcurrency !== undefined && { perPrincipalConcurrency: input.rateLimits.perPrincipalConcurrency }),
      sessionsPerPrincipal: input.rateLimits.sessionsPerPrincipal,
    },
    relay: { ...input.relay },
    approvals: { timeoutMs: input.approvals.timeoutMs, rememberMs: [...input.approvals.rememberMs] },
    audit: { ...input.audit, redact: { ...input.audit.redact, keys: [...input.audit.redact.keys], patterns: [...input.audit.redact.patterns], commands: [...input.audit.redact.commands] } },
    servers,
  };
}

function normalizeServer(name: string, s: ServerInput, base: string, top: Timeouts, lists: ListLimits): ServerConfig {
  // Optional keys are left out rather than set to undefined, so configs compare and print cleanly.
  const common = {
    ...(s.alias !== undefined && { alias: s.alias }),
    ...(s.namespace !== undefined && { namespace: s.namespace }),
    timeouts: {
      connectMs: s.timeouts?.connectMs ?? top.connectMs,
      requestMs: s.timeouts?.requestMs ?? top.requestMs,
      maxRequestMs: s.timeouts?.maxRequestMs ?? top.maxRequestMs,
    },
    lists: { maxItems: s.lists?.maxItems ?? lists.maxItems, maxBytes: s.lists?.maxBytes ?? lists.maxBytes },
    enabled: s.disabled !== true,
    pin: s.pin ?? 'strict',
    isolation: s.isolation ?? 'shared',
    ...(s.roots !== undefined && { roots: s.roots.map((root) => ({ ...root })) }),
  };
  const transport = resolveTransport(s);
  if (transport === 'stdio') {
    return {
      name,
      transport,
      ...common,
      command: s.command!,
      args: [...(s.args ?? [])],
      env: { ...s.env },
      ...(s.cwd !== undefined && { cwd: resolve(base, s.cwd) }),
    };
  }
  if (transport === undefined) throw new Error(`server ${name} has no transport; the rules should have refused it`);
  return { name, transport, ...common, url: s.url!, headers: { ...s.headers } };
}
