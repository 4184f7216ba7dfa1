import {
  closestKey,
  ConfigError,
  ConfigErrorCode,
  formatPath,
  HAND_WRITTEN,
  issueReason,
  knownKeysAt,
  parseConfigText,
  readConfigBytes,
  type ConfigProblem,
} from '@switchboard/config';
import { canonicalCallerName, foldCallerName } from '@switchboard/core';
import { z } from 'zod';
import { policyDocumentSchema, type PolicyDocument } from './policy-document.js';
import { undefinedRoleReason } from './role-names.js';

/** Reads and checks a policy file; throws a ConfigError listing every problem. */
export function loadPolicyFile(file: string): PolicyDocument {
  return loadPolicyBytes(file, readConfigBytes(file));
}

export function loadPolicyBytes(file: string, bytes: Buffer): PolicyDocument {
  const value = parseConfigText(file, bytes);
  const at = (path: string, reason: string): ConfigProblem => ({ file, path, reason });
  const parsed = policyDocumentSchema.safeParse(value, HAND_WRITTEN);
  const problems = parsed.success ? [] : parsed.error.issues.flatMap((issue) => issueProblems(issue, at));
  // Also when the schema refused the file, so that one round lists every problem.
  problems.push(...crossReferenceProblems(parsed.success ? parsed.data : readableParts.parse(value), at));
  if (!parsed.success || problems.length > 0) throw new ConfigError(ConfigErrorCode.Invalid, file, problems);
  return parsed.data;
}

/**
 * One problem per unknown key, named with the key it most likely meant: a policy key is
 * refused, not ignored as a config key is, since a misspelt `tool:` or `users:` would widen
 * or drop what a rule or a user gets.
 */
function issueProblems(issue: z.core.$ZodIssue, at: (path: string, reason: string) => ConfigProblem): ConfigProblem[] {
  if (issue.code !== 'unrecognized_keys') return [at(formatPath(issue.path), issueReason(issue))];
  const known = knownKeysAt(policyDocumentSchema, issue.path);
  return issue.keys.map((key) => {
    const meant = closestKey(key, known);
    const hint = meant ? `did you mean \`${meant}\`?` : `known here: ${known.join(', ')}`;
    return at(formatPath([...issue.path, key]), `unknown key (${hint})`);
  });
}

/** What the cross-reference checks read of a policy. */
interface References {
  roles: Record<string, readonly { id?: string; approvers?: readonly string[] }[]>;
  users: Record<string, readonly string[]>;
  groups: Record<string, readonly string[]>;
  everyone: readonly string[];
}

/** The strings of a list; nothing where there is no list. */
const readableNames = z
  .array(z.unknown())
  .catch([])
  .transform((names) => names.filter((name): name is string => typeof name === 'string'));

/**
 * The References of a file the schema refused: whatever has the shape to be read, and
 * nothing (never a failure) where it has not. A role whose rules are wrong is still defined.
 */
const readableParts = z.object({
  roles: z.record(z.string(), z.array(z.object({ id: z.string().optional().catch(undefined), approvers: readableNames.optional() }).catch({})).catch([])).catch({}),
  users: z.record(z.string(), readableNames).catch({}),
  groups: z.record(z.string(), readableNames).catch({}),
  everyone: readableNames,
}).catch({ roles: {}, users: {}, groups: {}, everyone: [] });

/** Roles that users, groups, everyone and approvers name but the file does not define, and rule ids used twice. */
function crossReferenceProblems(doc: References, at: (path: string, reason: string) => ConfigProblem): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const defined = Object.keys(doc.roles);
  const check = (path: (string | number)[], roles: readonly string[]) =>
    roles.forEach((role, i) => {
      const reason = undefinedRoleReason(role, defined);
      if (reason) problems.push(at(formatPath([...path, i]), reason));
    });
  const callers = new Map<string, { path: string; user: string }>();
  for (const [user, roles] of Object.entries(doc.users)) {
    check(['users', user], roles);
    const canonical = canonicalCallerName(user);
    const path = formatPath(['users', user]);
    // Entries are matched as callerKey folds names: `jwt:Erin` and `jwt:erin` would be one
    // caller with two lists of roles, and which one holds would be up to the file's order.
    const caller = canonical === undefined ? undefined : foldCallerName(canonical);
    if (caller === undefined) {
      problems.push(at(path, "not a caller name: an API key's name (or key:NAME), or jwt:, stdio: or loopback: and a name (docs/auth.md, Callers by name)"));
    } else if (callers.has(caller)) {
      const how = canonical === canonicalCallerName(callers.get(caller)!.user) ? '' : ' (names are matched without regard to case or Unicode composition)';
      problems.push(at(path, `names the same caller as ${callers.get(caller)!.path}${how}`));
    } else {
      callers.set(caller, { path, user });
    }
  }
  for (const [group, roles] of Object.entries(doc.groups)) check(['groups', group], roles);
  check(['everyone'], doc.everyone);
  const ids = new Map<string, string>();
  for (const [role, rules] of Object.entries(doc.roles)) {
    rules.forEach((rule, i) => {
      // An approver role nobody can have would leave every such call waiting out its timeout.
      if (rule.approvers) check(['roles', role, i, 'approvers'], rule.approvers);
      if (rule.id === undefined) return;
      const path = formatPath(['roles', role, i, 'id']);
      const first = ids.get(rule.id);
      if (first) problems.push(at(path, `rule id '${rule.id}' is used twice (also at ${first}): audit rows must name one rule`));
      else ids.set(rule.id, path);
    });
  }
  return problems;
}
