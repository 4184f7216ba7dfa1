import { LEGACY_PROTOCOL_VERSIONS, McpError } from '@switchboard/core';
import { HttpStatusError } from './http-status-error.js';

/** -32022, unsupported protocol version: how a server of the 2026-07-28 revision refuses a legacy initialize. */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;
const SPOKEN: ReadonlySet<string> = new Set(LEGACY_PROTOCOL_VERSIONS);

/**
 * Why the upstream cannot be used, when its answer to initialize says it speaks only
 * revisions the gateway does not (the stateless 2026-07-28 one): -32022 with
 * `data.supported`, in an HTTP 400's body or as the error of a stdio server. Undefined for any
 * other failure. Without it, an HTTP upstream's 400 was taken for an old HTTP+SSE server and
 * the reason shown was the fallback's 405.
 */
export function modernOnlyRefusal(err: unknown): string | undefined {
  const refusal = refusalOf(err);
  if (!refusal || refusal.code !== UNSUPPORTED_PROTOCOL_VERSION) return undefined;
  const supported = (refusal.data as { supported?: unknown } | undefined)?.supported;
  if (!Array.isArray(supported) || supported.length === 0 || supported.some((v) => SPOKEN.has(String(v)))) return undefined;
  const versions = supported.slice(0, 5).map(String).join(', ');
  const stateless = supported.includes('2026-07-28') ? ' (the stateless revision)' : '';
  const oldest = LEGACY_PROTOCOL_VERSIONS.at(-1);
  const newest = LEGACY_PROTOCOL_VERSIONS[0];
  return `it speaks only MCP ${versions}${stateless}, which Switchboard does not support yet; it speaks ${oldest} to ${newest} to upstreams`;
}

function refusalOf(err: unknown): { code: unknown; data?: unknown } | undefined {
  if (err instanceof McpError) return { code: err.code, data: err.data };
  if (!(err instanceof HttpStatusError) || err.status !== 400) return undefined;
  try {
    const answer = JSON.parse(err.body) as { error?: { code?: unknown; data?: unknown } };
    return answer.error && { code: answer.error.code, data: answer.error.data };
  } catch {
    return undefined;
  }
}
