import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import { httpRefusal, refusedForeign, type ForeignAnswer } from '@switchboard/downstream';
import { ADMIN_OPTIONS, ADMIN_ROLE, type AdminOptions } from './admin-options.js';
import { sendAuthRefusal } from './auth-refusal.js';
import { InboxAccess, inboxPathOf } from './inbox/inbox-access.js';
import { sendError, setAdminHeaders } from './json-response.js';

/** How the admin API refuses a request of a foreign Host or Origin: a JSON error body. */
const refusedAsAdminError: ForeignAnswer = (res, status, reason) => sendError(res, status, `request refused: ${reason}`);

/**
 * Runs ahead of every /admin route. The same Host/Origin check as the MCP endpoints: without
 * it a web page could rebind its DNS name to 127.0.0.1 and read the audit log through the
 * visitor's browser. Then the caller: with `auth.mode: required`, a credential whose
 * principal has the `admin` role; except the inbox (/admin/inbox*), which any authenticated
 * principal may use and which InboxAccess admits. Answers are never cached: they hold
 * arguments and principals.
 */
@Injectable()
export class AdminGuardMiddleware implements NestMiddleware {
  constructor(
    @Inject(ADMIN_OPTIONS) private readonly options: AdminOptions,
    private readonly inbox: InboxAccess,
  ) {}

  async use(req: IncomingMessage, res: ServerResponse, next: () => void): Promise<void> {
    setAdminHeaders(res);
    if (refusedForeign(req, res, this.options.config(), this.options.onRefused, refusedAsAdminError)) return;
    const inboxPath = inboxPathOf(req);
    if (inboxPath !== undefined) return this.inbox.admit(req, res, inboxPath, next);
    const auth = await this.options.authenticate?.(req);
    if (auth?.refusal) return sendAuthRefusal(req, res, auth.refusal, this.options.onRefused);
    const roleNeeded = this.options.config().auth.mode === 'required';
    if (roleNeeded && !auth?.principal?.roles.includes(ADMIN_ROLE)) {
      const why = `the admin API needs an API key or token with the '${ADMIN_ROLE}' role`;
      const principal = auth?.principal && { id: auth.principal.id, authMethod: auth.principal.authMethod };
      this.options.onRefused?.({ ...httpRefusal(req, why), decision: 'denied', rule: 'auth:admin-role', principal });
      return sendError(res, 403, `forbidden: ${why}`);
    }
    next();
  }
}
