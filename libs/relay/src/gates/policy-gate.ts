import type { SubjectFields, SubjectType } from '@switchboard/policy';
import type { RelayServices, RequestContext } from '../relay.types.js';

/**
 * The policy gate (after the catalog and tool pinning; tools-call.ts): may this principal do `action` to this
 * subject? Notes the deciding rule for the audit row. A caller that is refused is answered
 * exactly as if the name did not exist (the handler throws its "unknown" error), so a
 * policy does not reveal what it hides.
 */
export function authorized(ctx: RequestContext, services: RelayServices, action: string, type: SubjectType, fields: SubjectFields): boolean {
  if (!services.policy) return true;
  const decision = services.policy.decide(ctx.session.principal, action, type, fields);
  if (decision.allowed) ctx.audit.allowedBy = decision.rule;
  else ctx.audit.deniedBy = decision.rule;
  // Allowed, but only once a human approves: the approval gate asks, before anything goes upstream.
  if (decision.confirm) {
    ctx.audit.confirmBy = decision.rule;
    ctx.audit.approvers = decision.approvers ?? null;
  }
  return decision.allowed;
}
