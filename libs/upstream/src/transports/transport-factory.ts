import type { ServerConfig, RemoteServerConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/observability';
import { fetchWithCutBodies } from './post-answer-limit.js';
import { readLegacyMessages } from './legacy-sse-messages.js';
import { limitSseEvents } from './sse-event-limit.js';
import { StdioUpstreamTransport } from './stdio-transport.js';
import { StreamableHttpUpstreamTransport } from './streamable-http-transport.js';
import type { UpstreamTransport } from './upstream-transport.js';

export type RemoteFlavour = 'streamable-http' | 'sse';

/** A port so tests (and later, per-principal credentials) can supply transports. */
export interface TransportFactory {
  create(config: ServerConfig, flavour: RemoteFlavour | undefined, logger: Logger): UpstreamTransport | Promise<UpstreamTransport>;
}

export const UPSTREAM_TRANSPORT_FACTORY = Symbol('UPSTREAM_TRANSPORT_FACTORY');

/**
 * Makes the transport for one upstream: our own for stdio (stdio-transport.ts) and for
 * Streamable HTTP (streamable-http-transport.ts, on node:http), the SDK's SSEClientTransport
 * only for the legacy HTTP+SSE flavour.
 */
export class DefaultTransportFactory implements TransportFactory {
  /**
   * @param gatewayEnv given to every stdio upstream besides its own env (servingChainFor).
   * @param redactText hides secrets in what stdio upstreams write, and in what an HTTP one
   *   (Streamable HTTP or legacy HTTP+SSE: message-reader.ts) sends that is no message, before
   *   it is logged; the app passes the audit log's redactor, which this lib does not depend on.
   */
  constructor(
    private readonly gatewayEnv: Readonly<Record<string, string>> = {},
    private readonly redactText?: (text: string) => string,
  ) {}

  async create(config: ServerConfig, flavour: RemoteFlavour | undefined, logger: Logger): Promise<UpstreamTransport> {
    if (config.transport === 'stdio') return new StdioUpstreamTransport(config, logger, this.gatewayEnv, this.redactText);
    if (flavour !== 'sse') return new StreamableHttpUpstreamTransport(config, logger, this.redactText);
    // The SDK's client (and the zod schemas under it) costs the daemon about 25 MB of
    // memory; only a gateway with a legacy HTTP+SSE upstream loads it.
    const transport = sseTransport(await import('@modelcontextprotocol/client'), config, logger);
    return readLegacyMessages(transport, logger, this.redactText ?? ((text) => text));
  }
}

type ClientSdk = typeof import('@modelcontextprotocol/client');

function sseTransport({ SSEClientTransport }: ClientSdk, config: RemoteServerConfig, logger: Logger): UpstreamTransport {
  const headers = config.headers;
  return new SSEClientTransport(new URL(config.url), {
    requestInit: { headers },
    // Its POSTs: the SDK reads each answer whole, which cutBody bounds.
    fetch: (url: string | URL, init?: RequestInit) => fetchWithCutBodies(url, init),
    // EventSource takes no headers option; give it a fetch that adds them, and that bounds
    // the size of one event (sse-event-limit.ts).
    eventSourceInit: {
      fetch: async (url: string | URL, init?: RequestInit) => {
        const res = await fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } });
        if (!res.body) return res;
        return new Response(limitSseEvents(res.body, logger), { status: res.status, statusText: res.statusText, headers: res.headers });
      },
    } as EventSourceInit,
  }) as unknown as UpstreamTransport;
}

/**
 * Both transports of a `type: http` upstream failed: most often a wrong path, which the
 * Streamable HTTP answer shows best; the fallback's error alone ("SSE error: ...") misleads
 * whoever configured `type: http`. redactFailure words it from both, each redacted as its own.
 */
export class BothTransportsFailed extends Error {
  constructor(
    readonly streamable: unknown,
    readonly legacySse: unknown,
  ) {
    super(`Streamable HTTP: ${messageOf(streamable)}; then legacy HTTP+SSE: ${messageOf(legacySse)}`);
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * True when a Streamable HTTP initialize failed in the way the spec says means "this is an
 * old HTTP+SSE server": an HTTP 4xx status on the POST (typically 404 or 405).
 */
export function looksLikeLegacySse(err: unknown): boolean {
  const status = httpStatusOf(err);
  return status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403;
}

/** The HTTP status a transport error carries, if any (ours: HttpStatusError; the SDK's: see below). */
export function httpStatusOf(err: unknown): number | undefined {
  const e = err as { status?: unknown; data?: { status?: unknown }; code?: unknown } | undefined;
  if (typeof e?.status === 'number') return e.status;
  if (typeof e?.data?.status === 'number') return e.data.status;
  // SSEClientTransport reports HTTP failures as SseError with the status in `code`.
  if (typeof e?.code === 'number' && e.code >= 100 && e.code < 600) return e.code;
  return undefined;
}
