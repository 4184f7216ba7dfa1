import { ConfigError, ConfigErrorCode, describeIssue, formatPath, parseConfigText, readConfigBytes, type ConfigProblem } from '@switchboard/config';
import { policyDocumentSchema, type PolicyDocument } from './policy-document.js';

/** Reads and checks a policy file; throws a ConfigError listing every problem. */
export function loadPolicyFile(file: string): PolicyDocument {
  return loadPolicyBytes(file, readConfigBytes(file));
}

export function loadPolicyBytes(file: string, bytes: Buffer): PolicyDocument {
  const value = parseConfigText(file, bytes);
  const at = (path: string, reason: string): ConfigProblem => ({ file, path, reason });
  const parsed = policyDocumentSchema.safeParse(value, { error: describeIssue });
  if (!parsed.success) {
    throw new ConfigError(ConfigErrorCode.Invalid, file, parsed.error.issues.map((issue) => at(formatPath(issue.path), issue.message)));
  }
  const doc = parsed.data;
  const problems: ConfigProblem[] = [];
  const known = new Set(Object.keys(doc.roles));
  const check = (path: string[], roles: readonly string[]) =>
    roles.forEach((role, i) => {
      if (!known.has(role)) problems.push(at(formatPath([...path, i]), `no role '${role}' is defined under roles`));
    });
  for (const [user, roles] of Object.entries(doc.users)) check(['users', user], roles);
  for (const [group, roles] of Object.entries(doc.groups)) check(['groups', group], roles);
  check(['everyone'], doc.everyone);
  const ids = new Map<string, string>();
  for (const [role, rules] of Object.entries(doc.roles)) {
    rules.forEach((rule, i) => {
      if (rule.id === undefined) return;
      const path = formatPath(['roles', role, i, 'id']);
      const first = ids.get(rule.id);
      if (first) problems.push(at(path, `rule id '${rule.id}' is used twice (also at ${first}): audit rows must name one rule`));
      else ids.set(rule.id, path);
    });
  }
  if (problems.length > 0) throw new ConfigError(ConfigErrorCode.Invalid, file, problems);
  return doc;
}
