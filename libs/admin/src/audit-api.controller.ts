import type { ServerResponse } from 'node:http';
import { Controller, Get, Inject, Logger, Query, Res } from '@nestjs/common';
import { ADMIN_OPTIONS, type AdminOptions } from './admin-options.js';
import { auditRowJson } from '@switchboard/audit';
import { MAX_SCANNED_ROWS, parseAuditPageParams } from './audit-page-params.js';
import { sendError, sendJson } from './json-response.js';
import { sendParamProblems } from './query-params.js';

/** GET /admin/api/audit: one page of the audit log, newest first unless `order=asc`. */
@Controller('admin/api')
export class AuditApiController {
  private readonly logger = new Logger('AdminApi');
  /** The schema problem last logged: logged once, not at every page. */
  private warnedOf: string | undefined;

  constructor(@Inject(ADMIN_OPTIONS) private readonly options: AdminOptions) {}

  @Get('audit')
  async audit(@Query() query: Record<string, unknown>, @Res() res: ServerResponse): Promise<void> {
    const auditQuery = this.options.auditQuery;
    if (!auditQuery) return sendError(res, 404, 'the audit log is disabled (audit.enabled: false in the config)');
    const parsed = parseAuditPageParams(query);
    if (!parsed.ok) return sendParamProblems(res, parsed.problems);
    const { filter, limit, cursor, order } = parsed.request;
    try {
      // Rows of calls already answered may still be on their way to the database (ADR 007).
      await this.options.flushAudit?.();
      // The query runs on the event loop: a bounded scan keeps calls flowing meanwhile.
      const page = await auditQuery.page(filter, { limit, cursor, order, scanRows: MAX_SCANNED_ROWS });
      // While the database cannot be written, rows of answered calls wait in the daemon (and
      // its journal): say so, rather than pass the page off as everything answered so far.
      const pending = this.options.pendingAudit?.();
      // The page is read through the audit_record view: if someone with the file rewrote it
      // (or added a trigger), the rows shown may not be the chained ones. Say so with them.
      const warning = auditQuery.schemaProblem();
      if (warning !== undefined && warning !== this.warnedOf) this.logger.error(`audit log: ${warning}`);
      this.warnedOf = warning;
      sendJson(res, 200, {
        items: page.items.map(auditRowJson),
        nextCursor: page.nextCursor,
        resumeCursor: page.resumeCursor,
        ...(pending && { pending }),
        ...(warning !== undefined && { warning: `${warning}; run switchboard audit verify` }),
      });
    } catch (err) {
      this.logger.error(`reading the audit log failed: ${(err as Error).message}`);
      sendError(res, 500, 'the audit log could not be read; see the daemon log');
    }
  }
}
