import type { PolicyDocument } from './policy-document.js';

/**
 * The allow rules that cannot change any decision under this default effect, by the name audit
 * rows give them (the id, else `<role>#<n>`). Under a default of allow, what such a rule
 * allows is allowed already, and confirm and deny rules beat it anyway; only sampling needs a
 * rule whatever the default (a default is not consent to spend a user's model), so a rule
 * that allows `sample`, or `*`, still counts. A file of allow rules on a loopback listener,
 * where allow is the default, is most often meant as a list of what to serve: worth telling.
 */
export function inertAllowRules(doc: PolicyDocument, defaultEffect: 'allow' | 'deny'): string[] {
  if (defaultEffect !== 'allow') return [];
  const inert: string[] = [];
  for (const [role, rules] of Object.entries(doc.roles)) {
    rules.forEach((rule, index) => {
      if (rule.allow === undefined) return;
      const actions = [rule.allow].flat();
      if (actions.includes('sample') || actions.includes('*')) return;
      inert.push(rule.id ?? `${role}#${index + 1}`);
    });
  }
  return inert;
}
