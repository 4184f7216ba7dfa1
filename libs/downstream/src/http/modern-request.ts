import type { IncomingMessage } from 'node:http';
import { ErrorCode, LATEST_LEGACY_VERSION, LEGACY_PROTOCOL_VERSIONS } from '@switchboard/core';
import { headerOf } from './http-replies.js';

/** The claim every request of the 2026-07-28 revision carries in `_meta`. */
const CLAIM = 'io.modelcontextprotocol/protocolVersion';
const REVISION = /^\d{4}-\d\d-\d\d$/;

/**
 * The revision a request without a session claims, when it is one of the stateless era
 * (protocol-eras.md: a request with the `_meta` claim is modern; so is a header naming a
 * revision after the legacy ones): undefined for any legacy request. Such a client sends no
 * initialize, so "Mcp-Session-Id header is required" would tell it nothing it can act on.
 */
export function modernRevisionClaimed(req: IncomingMessage, body: unknown): string | undefined {
  const meta = (body as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  const claimed = meta && typeof meta === 'object' ? meta[CLAIM] : undefined;
  if (typeof claimed === 'string') return claimed.slice(0, 100);
  const header = headerOf(req.headers['mcp-protocol-version']);
  return header !== undefined && REVISION.test(header) && header > LATEST_LEGACY_VERSION ? header : undefined;
}

/** What such a request hears: -32022 with the revisions spoken, so that its client can fall back to them. */
export function unsupportedRevision(requested: string): { code: number; message: string; data: { supported: string[]; requested: string } } {
  const spoken = [...LEGACY_PROTOCOL_VERSIONS];
  const listed = `${spoken.slice(0, -1).join(', ')} and ${spoken.at(-1)}`;
  return {
    code: ErrorCode.UnsupportedProtocolVersion,
    message: `Unsupported protocol version ${requested}: Switchboard speaks ${listed} (initialize a session); the stateless 2026-07-28 revision is not supported yet`,
    data: { supported: spoken, requested },
  };
}
