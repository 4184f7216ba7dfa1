import { McpError } from '@switchboard/core';
import type { ServerConfig } from '@switchboard/config';
import { HttpStatusError } from './transports/http-status-error.js';
import { BothTransportsFailed } from './transports/transport-factory.js';

/**
 * What hides secrets in text (the audit log's rules, passed in by the app: this lib does not
 * depend on the audit lib). `redact` returns its input itself when nothing in it is secret.
 */
export interface UpstreamRedactor {
  redactText(text: string): string;
  redact(value: unknown): unknown;
}

/** Shorter values (a tenant id `a1`, a flag `1`) would hide innocent words everywhere. */
const SHORTEST_CREDENTIAL = 8;
const HIDDEN = '[REDACTED:upstream-credential]';
/** What the redactor's `redact` puts in place of the value of a member whose name is secret. */
const WHOLE_VALUE_HIDDEN = '[REDACTED]';
/** `Bearer X`, `Basic X`, `token X`: the credential alone is looked for too. */
const SCHEME_AND_VALUE = /^\S+\s+(\S+)$/;

/**
 * The credentials the gateway holds for one upstream connection: every configured header
 * value (an Authorization, an X-API-Key; a per-principal secret filled in), the password of
 * its URL, and the env values of a stdio server whose names the redactor's rules call
 * secret (GITHUB_TOKEN, API_KEY). Hosts must never read them, yet an upstream that rejects
 * one often quotes it in its error ("invalid token ghp_..."), and a text pattern does not
 * know every credential's shape.
 */
export function credentialsOf(config: ServerConfig, redactor: UpstreamRedactor | undefined): string[] {
  const found = new Set<string>();
  const add = (value: string) => {
    if (value.length >= SHORTEST_CREDENTIAL) found.add(value);
    const bare = SCHEME_AND_VALUE.exec(value)?.[1];
    if (bare !== undefined && bare.length >= SHORTEST_CREDENTIAL) found.add(bare);
  };
  if (config.transport === 'stdio') {
    for (const [name, value] of Object.entries(config.env)) {
      // A secret name has its whole value replaced by WHOLE_VALUE_HIDDEN; a value pattern
      // inside an innocent variable's value (a `password=` in a message) changes only that part.
      const judged = redactor?.redact({ [name]: value }) as Record<string, unknown> | undefined;
      if (judged?.[name] === WHOLE_VALUE_HIDDEN) add(value);
    }
  } else {
    for (const value of Object.values(config.headers)) add(value);
    const password = URL.canParse(config.url) ? decodeURIComponent(new URL(config.url).password) : '';
    if (password) add(password);
  }
  // Longest first: a value that contains another is hidden whole.
  return [...found].sort((a, b) => b.length - a.length);
}

/** `text` with the upstream's credentials and whatever the redactor's rules call secret hidden. */
export function redactUpstreamText(text: string, credentials: readonly string[], redactor: UpstreamRedactor | undefined): string {
  let out = text;
  for (const value of credentials) if (out.includes(value)) out = out.split(value).join(HIDDEN);
  return redactor ? redactor.redactText(out) : out;
}

/**
 * A failure's message with redactUpstreamText applied to what the upstream wrote, but not to
 * the advice the gateway adds to an HTTP status (HttpStatusError.hint): that quotes config
 * such as `Bearer ${env:NAME}`, which the rules would hide and leave the advice unreadable.
 */
export function redactFailure(err: unknown, credentials: readonly string[], redactor: UpstreamRedactor | undefined): string {
  if (err instanceof HttpStatusError && err.hint) return `${redactUpstreamText(err.upstreamText, credentials, redactor)}; ${err.hint}`;
  if (err instanceof BothTransportsFailed) {
    return `Streamable HTTP: ${redactFailure(err.streamable, credentials, redactor)}; then legacy HTTP+SSE: ${redactFailure(err.legacySse, credentials, redactor)}`;
  }
  return redactUpstreamText(err instanceof Error ? err.message : String(err), credentials, redactor);
}

/**
 * An upstream's error as a host may read it: its message redacted (redactUpstreamText). Its
 * code and data stay: data carries what a host acts on (the elicitations of a -32042, say).
 */
export function redactUpstreamError(err: McpError, credentials: readonly string[], redactor: UpstreamRedactor | undefined): McpError {
  const message = redactUpstreamText(err.message, credentials, redactor);
  return message === err.message ? err : new McpError(err.code, message, err.data);
}
