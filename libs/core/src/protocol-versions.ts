/**
 * The protocol revisions Switchboard speaks on the legacy (initialize/session) path, newest
 * first. The stateless 2026-07-28 revision is negotiated differently (server/discover) and is
 * not in this list.
 */
export const LEGACY_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export type LegacyProtocolVersion = (typeof LEGACY_PROTOCOL_VERSIONS)[number];

export const LATEST_LEGACY_VERSION: LegacyProtocolVersion = LEGACY_PROTOCOL_VERSIONS[0];

/** Assumed by the Streamable HTTP transport when a request carries no MCP-Protocol-Version. */
export const DEFAULT_HTTP_ASSUMED_VERSION: LegacyProtocolVersion = '2025-03-26';

export function isSupportedVersion(v: unknown): v is LegacyProtocolVersion {
  return typeof v === 'string' && (LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(v);
}

/** The server's answer to a client's requested version: the same one if spoken, else the latest. */
export function negotiateVersion(requested: unknown): LegacyProtocolVersion {
  return isSupportedVersion(requested) ? requested : LATEST_LEGACY_VERSION;
}

/** JSON-RPC batches exist only in 2025-03-26; 2025-06-18 removed them again. */
export function allowsBatches(version: string): boolean {
  return version === '2025-03-26';
}
