import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { Catch, HttpException, Logger, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { sendError, setAdminHeaders } from './json-response.js';

const ADMIN_PATH = /^\/admin(?:[/?]|$)/i;

/**
 * What reaches a client of /admin when something throws instead of answering: the admin API's
 * error shape and headers, as from every other admin error, and no internal message. Most
 * often it is Express failing to decode the path (`/admin/inbox/items/%E0%A4%A/answer`)
 * before any route or middleware of ours has run, so the headers the admin guard sets are
 * set here too. Registered for the whole app, as Express's routing errors only reach a global
 * filter; requests outside /admin get Nest's own handling, as before.
 */
@Catch()
export class AdminErrorFilter extends BaseExceptionFilter {
  private readonly logger = new Logger('AdminApi');

  override catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') return super.catch(exception, host);
    const req = host.switchToHttp().getRequest<IncomingMessage & { originalUrl?: string }>();
    const res = host.switchToHttp().getResponse<ServerResponse>();
    if (!ADMIN_PATH.test(req.originalUrl ?? req.url ?? '')) return super.catch(exception, host);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const status = statusOf(exception);
    if (status >= 500) this.logger.error(`an admin request failed: ${(exception as Error)?.message ?? String(exception)}`);
    setAdminHeaders(res);
    sendError(res, status, messageFor(status, exception));
  }
}

function statusOf(exception: unknown): number {
  if (exception instanceof HttpException) return exception.getStatus();
  const status = (exception as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 500;
}

function messageFor(status: number, exception: unknown): string {
  // Nest hands Express's decoding failure over as a BadRequestException caused by the URIError.
  const cause = exception instanceof HttpException ? exception.cause : exception;
  if (cause instanceof URIError) return 'bad request: the path is not valid percent-encoding';
  if (status >= 500) return 'internal error';
  return `${STATUS_CODES[status] ?? 'error'}`.toLowerCase();
}
