import type { ServerConfig } from './config.types.js';

/** The name in `${secret:NAME}`; the same rule as `switchboard secrets set`. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/*
 * A `${secret:NAME}` reference is kept in the loaded config as NUL + name + NUL. NUL cannot
 * occur in an environment variable or a header, so the marker never collides
 * with text the file meant literally (a `$${secret:X}` stays the text `${secret:X}`).
 */
const MARKER = /\u0000([A-Za-z_][A-Za-z0-9_]{0,63})\u0000/g;

export function secretMarker(name: string): string {
  return `\u0000${name}\u0000`;
}

/** A principal lacks secrets a per-principal server needs. */
export class MissingSecretsError extends Error {
  constructor(
    readonly server: string,
    readonly missing: readonly string[],
  ) {
    super(`server '${server}' needs the secret${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  }
}

/** The secrets a server's env or headers refer to, sorted, each once. */
export function secretNamesOf(server: ServerConfig): string[] {
  const names = new Set<string>();
  for (const text of fieldsOf(server)) for (const m of text.matchAll(MARKER)) names.add(m[1]);
  return [...names].sort();
}

/**
 * The server as one principal's connection runs it: every reference replaced by that
 * principal's value. Throws MissingSecretsError naming every secret they lack.
 */
export function withSecrets(server: ServerConfig, values: Readonly<Record<string, string>>): ServerConfig {
  const missing = secretNamesOf(server).filter((name) => values[name] === undefined);
  if (missing.length > 0) throw new MissingSecretsError(server.name, missing);
  const fill = (text: string) => text.replace(MARKER, (_m, name: string) => values[name]);
  const fillMap = (map: Record<string, string>) => Object.fromEntries(Object.entries(map).map(([k, v]) => [k, fill(v)]));
  if (server.transport === 'stdio') return { ...server, env: fillMap(server.env) };
  return { ...server, headers: fillMap(server.headers) };
}

function fieldsOf(server: ServerConfig): string[] {
  if (server.transport === 'stdio') return Object.values(server.env);
  return Object.values(server.headers);
}
