import type { IncomingMessage, ServerResponse } from 'node:http';
import { PROTECTED_RESOURCE_PATH } from '@switchboard/auth';
import { ErrorCode } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import { replyError } from './http-replies.js';
import type { DownstreamDeps } from '../downstream.types.js';
import type { LegacySseService } from './legacy-sse.service.js';
import { serveResourceMetadata } from './resource-metadata.route.js';
import type { StreamableHttpService } from './streamable-http.service.js';

/**
 * The MCP endpoints, matched on the raw request before any web framework sees it. Every tool
 * call crosses this door, and a framework router (Express under Nest) cost about a tenth of
 * the gateway's CPU per call for nothing these transports use: they read the body, pick the
 * answer's shape and stream themselves (docs/adr/006-mcp-edge-outside-nest.md).
 */
export class McpHttpRoutes {
  constructor(
    private readonly streamable: StreamableHttpService,
    private readonly legacy: LegacySseService,
    private readonly logger: Logger,
    private readonly deps: Pick<DownstreamDeps, 'config' | 'onRefused'>,
  ) {}

  /** Serves the request if its path is an MCP endpoint; false leaves it to the caller. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    switch (pathOf(req.url)) {
      case '/mcp':
        this.guard(req, res, this.streamable.handle(req, res));
        return true;
      case '/sse':
        this.guard(req, res, this.legacy.open(req, res));
        return true;
      case '/messages':
        this.guard(req, res, this.legacy.message(req, res));
        return true;
      // RFC 9728 names both: the bare well-known path, and one suffixed with the resource's path.
      case PROTECTED_RESOURCE_PATH:
      case `${PROTECTED_RESOURCE_PATH}/mcp`:
        serveResourceMetadata(req, res, this.deps);
        return true;
      default:
        return false;
    }
  }

  /** A bug in a transport answers 500 with a generic message; the detail goes to the log only. */
  private guard(req: IncomingMessage, res: ServerResponse, work: Promise<void>): void {
    work.catch((err: unknown) => {
      this.logger.error({ err, method: req.method, url: req.url }, 'MCP endpoint failed');
      if (!res.headersSent) replyError(res, 500, ErrorCode.InternalError, 'Internal error');
      else res.end();
    });
  }
}

/** The path without query string and without one trailing slash, as Express matched it. */
export function pathOf(url: string | undefined): string {
  if (!url) return '/';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
