import { systemEntry, type AuditLog } from '@switchboard/audit';
import { widenedDefault, type PolicyEvent } from './policy-setup.js';

/**
 * The policy in force at each moment is part of the record: which policy decided a row is
 * the last `policy/loaded` or `policy/reloaded` row before it. So each one put in force, and
 * each edit refused (the previous one stays), is a row of Switchboard's own (docs/audit.md):
 * who widened access, and when, was otherwise only in the daemon's log.
 */
export function recordPolicyEvent(event: PolicyEvent, audit: AuditLog | undefined): void {
  if (!audit) return;
  const { kind, ...facts } = event;
  const refused = kind === 'refused';
  const message =
    kind === 'reloaded'
      ? event.previousDefaultEffect === event.defaultEffect
        ? `the policy changed (default effect ${event.defaultEffect})`
        : widenedDefault(event.previousDefaultEffect, event.defaultEffect)
      : kind === 'refused'
        ? 'a policy change was refused; the previous policy stays in force'
        : `the policy was loaded (default effect ${event.defaultEffect})`;
  audit.note(
    systemEntry(
      {
        method: `policy/${kind}`,
        name: event.file,
        decision: refused ? 'refused' : 'allowed',
        rule: `policy:${kind}`,
        outcome: null,
        errorMessage: message,
      },
      facts,
    ),
  );
}
