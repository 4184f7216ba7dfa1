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

/**
 * A principal's secret holds what the place it fills cannot carry: a NUL byte (no environment
 * variable or header), a line break in a header. Spawning or sending would fail with an error
 * that quotes the value, into the log, the caller's answer and the audit row; this names the
 * secret and why instead.
 */
export class UnusableSecretError extends Error {
  constructor(
    readonly server: string,
    readonly secret: string,
    readonly why: string,
  ) {
    super(`server '${server}' cannot use the secret ${secret}: it ${why}`);
  }
}

/** Why a value cannot fill a stdio server's env (`inHeader` false) or a remote one's headers, if it cannot. */
export function secretValueProblem(value: string, inHeader: boolean): string | undefined {
  if (value.includes('\u0000')) return `holds a NUL byte, which no ${inHeader ? 'HTTP header' : 'environment variable'} can carry`;
  if (inHeader && /[\r\n]/.test(value)) return 'holds a line break, which no HTTP header can carry';
  return undefined;
}

/** The secrets a server's env or headers refer to, sorted, each once. */
export function secretNamesOf(server: ServerConfig): string[] {
  const names = new Set<string>();
  for (const text of fieldsOf(server)) for (const m of text.matchAll(MARKER)) names.add(m[1]);
  return [...names].sort();
}

/**
 * The server as one principal's connection runs it: every reference replaced by that
 * principal's value. Throws MissingSecretsError naming every secret they lack, and
 * UnusableSecretError for a value the env or a header cannot carry.
 */
export function withSecrets(server: ServerConfig, values: Readonly<Record<string, string>>): ServerConfig {
  const names = secretNamesOf(server);
  const missing = names.filter((name) => values[name] === undefined);
  if (missing.length > 0) throw new MissingSecretsError(server.name, missing);
  for (const name of names) {
    const why = secretValueProblem(values[name], server.transport !== 'stdio');
    if (why) throw new UnusableSecretError(server.name, name, why);
  }
  const fill = (text: string) => text.replace(MARKER, (_m, name: string) => values[name]);
  const fillMap = (map: Record<string, string>) => Object.fromEntries(Object.entries(map).map(([k, v]) => [k, fill(v)]));
  if (server.transport === 'stdio') return { ...server, env: fillMap(server.env) };
  return { ...server, headers: fillMap(server.headers) };
}

function fieldsOf(server: ServerConfig): string[] {
  if (server.transport === 'stdio') return Object.values(server.env);
  return Object.values(server.headers);
}
