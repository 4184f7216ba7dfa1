import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import { httpRefusal, refuseReason } from '@switchboard/downstream';
import { ADMIN_OPTIONS, type AdminOptions } from './admin-options.js';
import { sendError } from './json-response.js';

/**
 * Runs ahead of every /admin route. The same Host/Origin check as the MCP endpoints: without
 * it a web page could rebind its DNS name to 127.0.0.1 and read the audit log through the
 * visitor's browser. Answers are never cached: they hold arguments and principals.
 */
@Injectable()
export class AdminGuardMiddleware implements NestMiddleware {
  constructor(@Inject(ADMIN_OPTIONS) private readonly options: AdminOptions) {}

  use(req: IncomingMessage, res: ServerResponse, next: () => void): void {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const reason = refuseReason(req, this.options.config());
    if (reason !== undefined) {
      this.options.onRefused?.(httpRefusal(req, reason));
      return sendError(res, 403, `request refused: ${reason}`);
    }
    next();
  }
}
