import { ErrorCode, McpError, callerName, durationWords } from '@switchboard/core';
import { InboxFullError, type Inbox, type InboxOutcome } from '@switchboard/inbox';
import type { Item, RequestContext } from '../relay.types.js';
import { shapeServerRequest } from '../revision/shape-server-request.js';

/** What a human is asked to approve. */
export interface ApprovalRequest {
  server: string;
  tool: string;
  /** As the host sent them: shown on that host, which has them anyway. */
  arguments: unknown;
  /**
   * Redacted as the audit log would store them: shown in the inbox, to the caller or an
   * admin. `hidden`: redaction changed something, and the approver is told so.
   */
  redacted: { arguments: unknown; hidden: boolean };
  /** The audit log's digest of the arguments, as the call's row holds it; none without the log or arguments. */
  argumentsDigest?: string;
  rule: string;
  /** The rule's approvers (roles), when someone other than the caller must answer: only the inbox can ask them. */
  approvers?: readonly string[];
  timeoutMs: number;
  rememberChoicesMs: number[];
  /** The policy it is asked under: the inbox withdraws the question when another comes into force. */
  policyDigest: string;
}

/** How the asking ended. */
export type ApprovalAnswer =
  | { action: 'approve'; rememberForMs: number; answeredBy: string }
  | { action: 'decline'; answeredBy: string }
  | { action: 'expired' }
  | { action: 'withdrawn' }
  /** The policy changed while the question waited in the inbox: nobody answered it. */
  | { action: 'stale' }
  /** The host could not show the question (an error, or it went away); nobody approved. */
  | { action: 'failed'; reason: string };

/**
 * Asks the host that made the call, as a form elicitation on the call's own stream: accepting
 * the form approves (with how long to remember it), declining or cancelling refuses. The
 * form is one optional choice, so every host that renders forms can show it.
 */
export async function askHost(ctx: RequestContext, request: ApprovalRequest): Promise<ApprovalAnswer> {
  const labels = new Map<string, number>([['Just this once', 0], ...request.rememberChoicesMs.map((ms): [string, number] => [`For ${durationWords(ms)}`, ms])]);
  const properties =
    request.rememberChoicesMs.length === 0
      ? {}
      : { remember: { type: 'string', title: 'Remember this approval', enum: [...labels.keys()], default: 'Just this once' } };
  try {
    const form = { message: approvalMessage(request), requestedSchema: { type: 'object', properties } };
    // In the shape of the host's revision (before 2025-11-25 a choice has no default); the
    // gate asks only a host whose revision has forms (hostCanAnswer).
    const answer = await ctx.session.request('elicitation/create', shapeServerRequest('elicitation/create', form, ctx.session.protocolVersion) as Item, {
      timeoutMs: request.timeoutMs,
      signal: ctx.signal,
      relatedRequestId: ctx.request.id,
    });
    if (answer.action !== 'accept') return { action: 'decline', answeredBy: callerName(ctx.session.principal) };
    const chosen = (answer.content as Record<string, unknown> | undefined)?.remember;
    // A choice not offered is no answer to this form: taken for "once", a host that sent
    // "Forever" would believe it had been remembered. Relayed forms are held to their schema too.
    if (chosen !== undefined && !labels.has(String(chosen))) {
      return { action: 'failed', reason: `the host's answer chose '${String(chosen)}' to remember it, which was not offered (${[...labels.keys()].join(', ')})` };
    }
    return { action: 'approve', rememberForMs: labels.get(String(chosen)) ?? 0, answeredBy: callerName(ctx.session.principal) };
  } catch (err) {
    if (ctx.signal.aborted) return { action: 'withdrawn' };
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) return { action: 'expired' };
    return { action: 'failed', reason: err instanceof McpError ? err.message : 'the host failed to answer' };
  }
}

/** Puts the approval in the web inbox, for the caller (or an admin) to answer there. */
export async function askInbox(ctx: RequestContext, inbox: Inbox, request: ApprovalRequest): Promise<ApprovalAnswer> {
  let outcome: InboxOutcome;
  try {
    outcome = await inbox.ask(
      {
        kind: 'approval',
        tool: request.tool,
        arguments: request.redacted.arguments,
        argumentsRedacted: request.redacted.hidden,
        ...(request.argumentsDigest !== undefined && { argumentsDigest: request.argumentsDigest }),
        rule: request.rule,
        ...(request.approvers && { approvers: request.approvers }),
        rememberChoicesMs: request.rememberChoicesMs,
        policyDigest: request.policyDigest,
        server: request.server,
        principal: callerName(ctx.session.principal),
        timeoutMs: request.timeoutMs,
      },
      ctx.signal,
    );
  } catch (err) {
    // The caller's share of the inbox (or the inbox) is full: refused, and said why.
    if (err instanceof InboxFullError) return { action: 'failed', reason: err.message };
    throw err;
  }
  switch (outcome.action) {
    case 'approve':
      return { action: 'approve', rememberForMs: outcome.rememberForMs ?? 0, answeredBy: outcome.answeredBy };
    case 'expired':
    case 'withdrawn':
    case 'stale':
      return { action: outcome.action };
    default:
      // decline, and answers an approval cannot take (the inbox refuses those before here).
      return { action: 'decline', answeredBy: 'answeredBy' in outcome ? outcome.answeredBy : 'unknown' };
  }
}

function approvalMessage(r: ApprovalRequest): string {
  return [
    `Allow the tool ${r.tool} on server '${r.server}' to run?`,
    `The gateway's policy (rule '${r.rule}') asks you to confirm this call.`,
    '',
    'Arguments:',
    JSON.stringify(r.arguments ?? {}, null, 2),
  ].join('\n');
}
