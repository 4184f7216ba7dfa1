import { randomBytes } from 'node:crypto';
import { bareEntry, canonicalJson, canonicalTextDigest } from '@switchboard/audit';
import { ErrorCode, McpError, abandonmentOf, callerName, durationWords } from '@switchboard/core';
import type { ApprovalBinding } from '@switchboard/policy';
import { askHost, askInbox, type ApprovalAnswer, type ApprovalRequest } from '../approvals/ask-approval.js';
import { hostCanAnswer } from '../server-requests/host-capability.js';
import { abandonmentText } from '../audit/audited-request.js';
import { sessionFields } from '../audit/session-fields.js';
import type { RelayServices, RequestContext } from '../relay.types.js';

/**
 * Keys the arguments digest an approval is bound to. Per process, like the remembered
 * approvals themselves; keyed so the digest shown on the inbox page cannot be used to guess
 * a redacted argument.
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
  };
  const book = services.approvals;
  if (book?.covers(binding)) return record(ctx, services, call, started, { via: 'remembered', rule: 'approval:remembered' });

  const config = services.config();
  const request: ApprovalRequest = {
    server: call.server,
    tool: call.tool,
    // The host gets the arguments it sent; the inbox gets them redacted, and says so: a
    // value that looks like a secret can hide anything after it (`password='; curl … | sh`),
    // which an approver must not approve unseen.
    arguments: call.args,
    redacted: redactedForInbox(services, call.args),
    argumentsDigest: binding.argumentsDigest,
    rule,
    timeoutMs: config.approvals.timeoutMs,
    rememberChoicesMs: config.approvals.rememberMs,
  };
  const onHost = hostCanAnswer(ctx.session, 'elicitation/create', { mode: 'form' });
  const inbox = config.relay.inbox ? services.inbox : undefined;
  if (!onHost && !inbox) {
    // Say which of the two it is: with relay.inbox on, the process serves no inbox page
    // (switchboard stdio), and turning the setting on would change nothing.
    const noInbox = config.relay.inbox ? 'this process serves no inbox (switchboard stdio has no web page; the HTTP daemon serves /admin/inbox)' : 'the inbox is off (relay.inbox: false)';
    return refuse(ctx, services, call, started, 'unavailable', `The call to ${call.tool} needs a human's approval, but the host cannot show a form (elicitation) and ${noInbox}`);
  }
  const via = onHost ? 'host' : 'inbox';
  const answer = await keepingCallerInformed(ctx, `Waiting for approval (${via === 'host' ? 'on this host' : 'in the inbox at /admin/inbox'})`, () =>
    onHost ? askHost(ctx, request) : askInbox(ctx, inbox!, request),
  );
  switch (answer.action) {
    case 'approve':
      if (policy.digest !== binding.policyDigest) {
        return refuse(ctx, services, call, started, 'stale-policy', `The policy changed while the call to ${call.tool} waited for approval; call it again`);
      }
      book?.remember(binding, answer.rememberForMs);
      return record(ctx, services, call, started, { via, rule: `approval:${via}`, answeredBy: answer.answeredBy, rememberForMs: answer.rememberForMs });
    case 'decline':
      return refuse(ctx, services, call, started, 'declined', `The call to ${call.tool} was declined by ${answer.answeredBy}`, answer.answeredBy, via);
    case 'expired':
      return refuse(ctx, services, call, started, 'expired', `Nobody approved the call to ${call.tool} within ${durationWords(request.timeoutMs)}`, undefined, via);
    case 'failed':
      return refuse(ctx, services, call, started, 'failed', `The call to ${call.tool} could not be approved: ${answer.reason}`, undefined, via);
    case 'withdrawn': {
      // The call's own row says denied by this rule too, not the catch-all invalid-request.
      ctx.audit.allowedBy = null;
      ctx.audit.deniedBy = 'approval:withdrawn';
      // Nobody refused it: the host gave up (no answer, so no code) or its session ended.
      const abandoned = abandonmentOf(ctx.signal);
      const why = abandoned ? abandonmentText(abandoned) : 'Request cancelled';
      await record(ctx, services, call, started, { via, rule: 'approval:withdrawn', refused: why, unanswered: true });
      throw new McpError(ErrorCode.RequestTimeout, 'Request cancelled');
    }
  }
}

function redactedForInbox(services: RelayServices, args: unknown): ApprovalRequest['redacted'] {
  const shown = services.audit ? services.audit.redact(args) : args;
  return { arguments: shown, hidden: shown !== args };
}

type Reason = 'declined' | 'expired' | 'unavailable' | 'failed' | 'stale-policy';

async function refuse(
  ctx: RequestContext,
  services: RelayServices,
  call: ApprovalCall,
  started: number,
  reason: Reason,
  message: string,
  answeredBy?: string,
  via?: string,
): Promise<never> {
  ctx.audit.allowedBy = null;
  ctx.audit.deniedBy = `approval:${reason}`;
  await record(ctx, services, call, started, { via, rule: `approval:${reason}`, answeredBy, refused: message });
  throw new McpError(ErrorCode.ApprovalRefused, message, { reason });
}

interface ApprovalFacts {
  via?: string;
  rule: string;
  answeredBy?: string;
  rememberForMs?: number;
  /** The error the caller gets, when not approved. */
  refused?: string;
  /** The caller gets no refusal (it withdrew): the row has no error code. */
  unanswered?: boolean;
}

/** The approval's own audit row: who asked, for what, who answered and how. */
async function record(ctx: RequestContext, services: RelayServices, call: ApprovalCall, started: number, facts: ApprovalFacts): Promise<void> {
  const audit = services.audit;
  if (!audit) return;
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
    errorCode: facts.refused === undefined || facts.unanswered ? null : ErrorCode.ApprovalRefused,
    requestId: String(ctx.request.id),
    traceId: ctx.audit.traceId,
  });
  entry.latencyMs = Math.round((performance.now() - started) * 1000) / 1000;
  const details = {
    arguments: call.args ?? {},
    confirmedBy: ctx.audit.confirmBy,
    policy: services.policy?.digest,
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
