import type { IncomingMessage, ServerResponse } from 'node:http';
import { Controller, Get, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Inbox } from '@switchboard/inbox';
import { toldReason } from '@switchboard/auth';
import { httpRefusal } from '@switchboard/downstream';
import { ADMIN_OPTIONS, type AdminOptions } from '../admin-options.js';
import { sendError, sendJson } from '../json-response.js';
import { sendParamProblems, unknownParamProblems } from '../query-params.js';
import { InboxAccess, inboxPathOf, type InboxCaller } from './inbox-access.js';
import { parseInboxAnswer } from './inbox-answer.js';
import { InboxEventStreams, SESSION_OVER } from './inbox-events.js';
import { ASSETS, INBOX_HTML, LOGIN_HTML, isAssetName, sendAsset, sendHtml } from './inbox-page.js';
import { sessionCookie } from './inbox-sessions.js';
import { readJsonBody } from './json-body.js';

const MAX_ID_LENGTH = 100;

/**
 * The inbox web page and its JSON/SSE API (docs/inbox.md). The admin guard has run first:
 * Host/Origin checked, and InboxAccess has recorded the caller, or let an open route (page,
 * assets, login, logout) through without one. Every other route refuses a request without a
 * caller, in case it arrived here some other way.
 */
@Controller('admin/inbox')
export class InboxController {
  constructor(
    @Inject(ADMIN_OPTIONS) private readonly options: AdminOptions,
    private readonly access: InboxAccess,
    private readonly streams: InboxEventStreams,
  ) {}

  @Get()
  page(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    if (!this.inboxOr404(res)) return;
    sendHtml(res, this.access.callerOf(req) ? INBOX_HTML : LOGIN_HTML);
  }

  @Get(Object.keys(ASSETS))
  asset(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    if (!this.inboxOr404(res)) return;
    const name = (inboxPathOf(req) ?? '').split('/').pop() ?? '';
    if (isAssetName(name)) sendAsset(res, name);
    else sendError(res, 404, 'no such file');
  }

  @Get('items')
  items(@Query() query: Record<string, unknown>, @Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    const found = this.callerOr401(req, res);
    if (!found || this.refusedParams(query, 'items', res)) return;
    const { inbox, caller } = found;
    sendJson(res, 200, { items: inbox.visibleTo(caller.viewer), now: Date.now(), viewer: caller.viewer, session: caller.sessionId !== undefined });
  }

  @Get('events')
  events(@Query() query: Record<string, unknown>, @Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    const found = this.callerOr401(req, res);
    if (!found || this.refusedParams(query, 'events', res)) return;
    const { inbox, caller } = found;
    const { principal, admin } = caller.viewer;
    this.streams.start(res, {
      inbox,
      viewer: caller.viewer,
      session: caller.sessionId !== undefined,
      lapse: async () => {
        // Checked in the same tick as resolve() reads the session, so a sign-out cannot fall between the two.
        // A session another request of the cookie ended for a refused credential (a second tab, an answer) is a lapse, not a sign-out.
        if (caller.sessionId !== undefined && !this.access.signedIn(caller.sessionId)) return this.access.refusalOf(caller.sessionId) ?? SESSION_OVER;
        const now = await this.access.resolve(req);
        if (now.refusal) return now.refusal;
        if (now.caller.viewer.principal === principal && now.caller.viewer.admin === admin) return undefined;
        // A token refreshed into another principal, or a key that lost the admin role, sees another inbox.
        return { rule: 'auth:principal-changed', reason: `the credential now admits ${now.caller.viewer.principal}${now.caller.viewer.admin ? ' as admin' : ''}` };
      },
      onLapse: (lapse) => this.options.onCredentialLapse?.({ principal: caller.principal, ...lapse }),
    });
  }

  @Post('items/:id/answer')
  async answer(@Param('id') id: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    const found = this.callerOr401(req, res);
    if (!found) return;
    const body = await readJsonBody(req);
    if (!body.ok) return sendError(res, body.status, body.message);
    const parsed = parseInboxAnswer(body.value);
    if (!parsed.ok) return sendError(res, 400, 'invalid answer', parsed.problems);
    const refusal = id.length > MAX_ID_LENGTH ? { status: 404 as const, problems: ['no such pending question'] } : found.inbox.answer(id, found.caller.viewer, parsed.answer);
    if (!refusal) {
      res.writeHead(204).end();
      return;
    }
    // Someone answering a question that is not theirs (its id leaked, or was guessed), or a
    // caller its own call that someone else must approve: refusals the log records, though the
    // first is told only what an unknown id gets.
    const recorded = refusal.othersQuestion
      ? { rule: 'inbox:not-yours' as const, reason: `an answer to a question of ${refusal.othersQuestion.principal ?? 'no caller (of unknown cause)'}'s, which this caller may not answer` }
      : refusal.ownApproval
        ? { rule: 'inbox:own-approval' as const, reason: `an answer to ${refusal.ownApproval.principal}'s own call, which someone else must approve` }
        : undefined;
    if (recorded) {
      const principal = { id: found.caller.principal.id, authMethod: found.caller.principal.authMethod };
      this.options.onRefused?.({ ...httpRefusal(req, recorded.reason), decision: 'denied', rule: recorded.rule, principal });
    }
    const message = refusal.status === 400 ? 'the answer does not fit the question' : refusal.status === 404 ? 'no such pending question' : 'forbidden';
    sendError(res, refusal.status, message, refusal.problems);
  }

  @Post('login')
  async login(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    if (!this.inboxOr404(res)) return;
    const body = await readJsonBody(req, 16 * 1024);
    if (!body.ok) return sendError(res, body.status, body.message);
    const token = (body.value as { token?: unknown } | null)?.token;
    // A new sign-in ends the session this browser had, so no stale id lives on beside the new one.
    this.access.logout(req);
    const outcome = await this.access.login(token);
    if ('refusal' in outcome) {
      const { rule, reason, attributedTo } = outcome.refusal;
      if (outcome.status === 401) {
        const principal = attributedTo && { principal: attributedTo };
        this.options.onRefused?.({ httpMethod: 'POST', path: '/admin/inbox/login', decision: 'unauthenticated', rule, reason, address: req.socket?.remoteAddress, ...principal });
      }
      return sendError(res, outcome.status, `sign-in refused: ${toldReason(outcome.refusal)}`);
    }
    res.setHeader('Set-Cookie', sessionCookie(req, outcome.sessionId));
    sendJson(res, 200, { viewer: outcome.caller.viewer });
  }

  @Post('logout')
  async logout(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    if (!this.inboxOr404(res)) return;
    const body = await readJsonBody(req, 1024);
    if (!body.ok) return sendError(res, body.status, body.message);
    this.access.logout(req);
    res.setHeader('Set-Cookie', sessionCookie(req, undefined));
    res.writeHead(204).end();
  }

  /**
   * These routes take no query parameters; one given is refused, as the audit API refuses
   * those it does not know: `?principal=alice` ignored would show every item while looking
   * like alice's.
   */
  private refusedParams(query: Record<string, unknown>, route: string, res: ServerResponse): boolean {
    const problems = unknownParamProblems(query, [], `/admin/inbox/${route} takes none`);
    if (problems.length > 0) sendParamProblems(res, problems);
    return problems.length > 0;
  }

  private inboxOr404(res: ServerResponse): Inbox | undefined {
    const inbox = this.options.inbox;
    if (!inbox) sendError(res, 404, 'the inbox is not available: this daemon was started without one');
    return inbox;
  }

  private callerOr401(req: IncomingMessage, res: ServerResponse): { inbox: Inbox; caller: InboxCaller } | undefined {
    const inbox = this.inboxOr404(res);
    if (!inbox) return undefined;
    const caller = this.access.callerOf(req);
    if (!caller) {
      sendError(res, 401, 'unauthorized: sign in at /admin/inbox, or send a credential');
      return undefined;
    }
    return { inbox, caller };
  }
}
