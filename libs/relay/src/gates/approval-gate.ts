import { randomBytes } from 'node:crypto';
import { bareEntry, canonicalJson, canonicalTextDigest } from '@switchboard/audit';
import { ErrorCode, McpError, abandonmentOf, callerName, durationWords } from '@switchboard/core';
import { approverWords } from '@switchboard/inbox';
import type { ApprovalBinding } from '@switchboard/policy';
import { askHost, askInbox, type ApprovalAnswer, type ApprovalRequest } from '../approvals/ask-approval.js';
import { hostCanAnswer } from '../server-requests/host-capability.js';
import { abandonmentText } from '../audit/audited-request.js';
import { sessionFields } from '../audit/session-fields.js';
import type { RelayServices, RequestContext } from '../relay.types.js';

/**
 * Keys the arguments digest an approval is bound to. Per process, like the remembered
 * approvals themselves. (The inbox shows the audit log's digest, keyed by the log's own key,
 * so neither can be used to guess a redacted argument.)
 */
const DIGEST_KEY = randomBytes(32);

/** How often a caller waiting for a human hears progress (when it asked for progress). */
const PROGRESS_EVERY_MS = 10_000;

export interface ApprovalCall {
  server: string;
  /** The public tool name. */
  tool: string;
  originalName: string;
  args: unknown;
}

/**
 * The approval gate (after the policy, before the rate limits; tools-call.ts): a call a `confirm` rule allowed runs only once
 * a human approves it. Asked on the calling host when it can show a form (elicitation), else
 * in the web inbox; bound to (principal, tool, arguments digest, policy digest); expires.
 * An approval remembered for a while covers the same call again. Every approval, remembered
 * or refused, is an audit row of its own (`switchboard/approval`); a refusal throws -32014.
 */
export async function approved(ctx: RequestContext, services: RelayServices, call: ApprovalCall): Promise<void> {
  const rule = ctx.audit.confirmBy;
  const policy = services.policy;
  if (rule === null || !policy) return;
  const started = performance.now();
  const binding: ApprovalBinding = {
    principal: callerName(ctx.session.principal),
    tool: call.tool,
    argumentsDigest: canonicalTextDigest(canonicalJson(call.args ?? {}), DIGEST_KEY),
    policyDigest: policy.digest,
    rule,
  };
  // What every row of this approval names: the call, when it was asked, under which policy.
  const asked: Asked = { call, started, policy: binding.policyDigest };
  const book = services.approvals;
  if (book?.covers(binding)) return record(ctx, services, asked, { via: 'remembered', rule: 'approval:remembered' });

  const config = services.config();
  const request: ApprovalRequest = {
    server: call.server,
    tool: call.tool,
    // The host gets the arguments it sent; the inbox gets them redacted, and says so: a
    // value that looks like a secret can hide anything after it (`password='; curl … | sh`),
    // which an approver must not approve unseen.
    arguments: call.args,
    redacted: redactedForInbox(services, call.args),
    // The audit log's digest, which the call's row will hold, so that an approver can find
    // it there; the binding's is keyed per process, for remembering, and means nothing outside.
    argumentsDigest: call.args === undefined ? undefined : services.audit?.argumentsDigestOf(call.args),
    rule,
    timeoutMs: config.approvals.timeoutMs,
    rememberChoicesMs: config.approvals.rememberMs,
    policyDigest: binding.policyDigest,
  };
  const approvers = ctx.audit.approvers;
  if (approvers) request.approvers = approvers;
  const byApprover = approvers && `approval by someone else with ${approverWords(approvers)} (rule '${rule}')`;
  // With approvers, the caller's own host is no place to ask: its user is the caller.
  const onHost = !approvers && hostCanAnswer(ctx.session, 'elicitation/create', { mode: 'form' });
  const inbox = config.relay.inbox ? services.inbox : undefined;
  if (!onHost && !inbox) {
    // Say which of the two it is: with relay.inbox on, the process serves no inbox page
    // (switchboard stdio), and turning the setting on would change nothing.
    const noInbox = config.relay.inbox ? 'this process serves no inbox (switchboard stdio has no web page; the HTTP daemon serves /admin/inbox)' : 'the inbox is off (relay.inbox: false)';
    const needs = byApprover ? `needs ${byApprover} in the inbox, but` : "needs a human's approval, but the host cannot show a form (elicitation) and";
    return refuse(ctx, services, asked, 'unavailable', `The call to ${call.tool} ${needs} ${noInbox}`);
  }
  if (byApprover && config.auth.mode !== 'required') {
    // Every caller is the one anonymous local principal, so the only one who could answer is
    // the caller: refused now, not after approvals.timeoutMs of waiting for nobody.
    const why = `this daemon tells no callers apart (auth.mode: ${config.auth.mode}): nobody but the caller could answer`;
    return refuse(ctx, services, asked, 'unavailable', `The call to ${call.tool} needs ${byApprover}, but ${why}`);
  }
  const via = onHost ? 'host' : 'inbox';
  const where = onHost ? 'on this host' : approvers ? `in the inbox at /admin/inbox, by someone with ${approverWords(approvers)}` : 'in the inbox at /admin/inbox';
  const answer = await keepingCallerInformed(ctx, `Waiting for approval (${where})`, () => (onHost ? askHost(ctx, request) : askInbox(ctx, inbox!, request)));
  const stale = `The policy changed while the call to ${call.tool} waited for approval; call it again`;
  switch (answer.action) {
    case 'approve':
      if (policy.digest !== binding.policyDigest) {
        // Approved on the host (the inbox withdraws its questions when the policy changes), or
        // in the inbox in the moment of the change: the row says who approved, and how.
        return refuse(ctx, services, asked, 'stale-policy', stale, answer.answeredBy, via);
      }
      book?.remember(binding, answer.rememberForMs);
      return record(ctx, services, asked, { via, rule: `approval:${via}`, answeredBy: answer.answeredBy, rememberForMs: answer.rememberForMs });
    case 'decline':
      return refuse(ctx, services, asked, 'declined', `The call to ${call.tool} was declined by ${answer.answeredBy}`, answer.answeredBy, via);
    case 'expired':
      return refuse(ctx, services, asked, 'expired', `Nobody approved the call to ${call.tool} within ${durationWords(request.timeoutMs)}`, undefined, via);
    case 'stale':
      // The inbox withdrew the question when the policy changed; nobody answered it.
      return refuse(ctx, services, asked, 'stale-policy', stale, undefined, via);
    case 'failed':
      return refuse(ctx, services, asked, 'failed', `The call to ${call.tool} could not be approved: ${answer.reason}`, undefined, via);
    case 'withdrawn': {
      // The call's own row says denied by this rule too, not the catch-all invalid-request.
      ctx.audit.allowedBy = null;
      ctx.audit.deniedBy = 'approval:withdrawn';
      // Nobody refused it: the host gave up (no answer, so no code) or its session ended
      // (the -32000 its transport told it, as the call's own row has).
      const abandoned = abandonmentOf(ctx.signal);
      const why = abandoned ? abandonmentText(abandoned) : 'Request cancelled';
      const told = abandoned?.kind === 'closed' ? (abandoned.told?.code ?? null) : null;
      await record(ctx, services, asked, { via, rule: 'approval:withdrawn', refused: why, errorCode: told });
      throw new McpError(ErrorCode.RequestTimeout, 'Request cancelled');
    }
  }
}

function redactedForInbox(services: RelayServices, args: unknown): ApprovalRequest['redacted'] {
  const shown = services.audit ? services.audit.redact(args) : args;
  return { arguments: shown, hidden: shown !== args };
}

type Reason = 'declined' | 'expired' | 'unavailable' | 'failed' | 'stale-policy';

/** An approval asked: the call, when (performance.now()), and the digest of the policy it was asked under. */
interface Asked {
  call: ApprovalCall;
  started: number;
  policy: string;
}

async function refuse(
  ctx: RequestContext,
  services: RelayServices,
  asked: Asked,
  reason: Reason,
  message: string,
  answeredBy?: string,
  via?: string,
): Promise<never> {
  ctx.audit.allowedBy = null;
  ctx.audit.deniedBy = `approval:${reason}`;
  await record(ctx, services, asked, { via, rule: `approval:${reason}`, answeredBy, refused: message, errorCode: ErrorCode.ApprovalRefused });
  throw new McpError(ErrorCode.ApprovalRefused, message, { reason });
}

interface ApprovalFacts {
  via?: string;
  rule: string;
  answeredBy?: string;
  rememberForMs?: number;
  /** The error the caller gets, when not approved. */
  refused?: string;
  /** Its code: -32014 when refused; none when the host withdrew it, or what its session's end told it. */
  errorCode?: number | null;
}

/** The approval's own audit row: who asked, for what, who answered and how. */
async function record(ctx: RequestContext, services: RelayServices, asked: Asked, facts: ApprovalFacts): Promise<void> {
  const audit = services.audit;
  if (!audit) return;
  const { call, started } = asked;
  const entry = bareEntry({
    ...sessionFields(ctx.session),
    upstream: call.server,
    method: 'switchboard/approval',
    name: call.tool,
    originalName: call.originalName,
    decision: facts.refused === undefined ? 'allowed' : 'denied',
    rule: facts.rule,
    outcome: null,
    errorMessage: null,
    errorCode: facts.errorCode ?? null,
    requestId: String(ctx.request.id),
    traceId: ctx.audit.traceId,
  });
  entry.latencyMs = Math.round((performance.now() - started) * 1000) / 1000;
  const details = {
    arguments: call.args ?? {},
    confirmedBy: ctx.audit.confirmBy,
    ...(ctx.audit.approvers && { approvers: ctx.audit.approvers }),
    policy: asked.policy,
    ...(facts.via && { via: facts.via }),
    ...(facts.answeredBy !== undefined && { answeredBy: facts.answeredBy }),
    ...(facts.rememberForMs ? { rememberForMs: facts.rememberForMs } : {}),
  };
  await audit.record(entry, details, facts.refused ?? null).catch(() => undefined);
}

/**
 * A human may take minutes. A caller that asked for progress hears that the call waits for
 * approval, every few seconds, so its own timeout can be reset by progress rather than fire.
 */
async function keepingCallerInformed<T>(ctx: RequestContext, message: string, wait: () => Promise<T>): Promise<T> {
  const token = (ctx.params._meta as Record<string, unknown> | undefined)?.progressToken;
  if (token === undefined) return wait();
  let progress = 0;
  const tell = () =>
    void ctx.session
      .send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: progress++, message } }, { relatedRequestId: ctx.request.id })
      .catch(() => undefined);
  tell();
  const timer = setInterval(tell, PROGRESS_EVERY_MS);
  try {
    return await wait();
  } finally {
    clearInterval(timer);
  }
}
