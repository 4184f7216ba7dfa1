import { foldCallerName, parseCallerName } from '@switchboard/core';
import type { InboxViewer } from './inbox-item.js';

/** What the inbox needs to know of a question to decide who may see and answer it. */
export interface QuestionOwner {
  /** Whose request caused it (its callerName); null when unknown. */
  principal: string | null;
  /** An approval whose rule names approvers: roles, one of whose members (never the caller) answers. */
  approvers?: readonly string[];
}

/** `role lead`, `roles lead or ops`: who may approve, for messages. */
export function approverWords(roles: readonly string[]): string {
  return roles.length === 1 ? `role ${roles[0]}` : `roles ${roles.slice(0, -1).join(', ')} or ${roles.at(-1)}`;
}

/** The viewer made the call the question is about (exactly as named: its own questions are the ones it sees). */
export function isAsker(viewer: InboxViewer, question: QuestionOwner): boolean {
  return question.principal !== null && question.principal === viewer.principal;
}

/**
 * Whether the viewer could be the caller, for an approval someone else must give: the same
 * name whatever the case or composition (as the policy matches names: `Carol` is `carol`),
 * and whatever the method. A key `dave` and a token user `jwt:dave` are two callers
 * elsewhere, but nothing proves they are two people, and a sign-off by someone else must
 * not be given by the one person holding both.
 */
export function mayBeAsker(viewer: InboxViewer, question: QuestionOwner): boolean {
  return question.principal !== null && personOf(question.principal) === personOf(viewer.principal);
}

/** A caller name's principal without its method, folded: `jwt:Dave` and `dave` are one. */
function personOf(name: string): string {
  return foldCallerName(parseCallerName(name)?.id ?? name);
}

/**
 * Whether the viewer may answer. Without approvers: an admin, or whoever made the call.
 * With approvers: an admin or a member of one of the roles, but never the caller, under any
 * spelling or method of its name (mayBeAsker).
 */
export function mayAnswer(viewer: InboxViewer, question: QuestionOwner): boolean {
  if (!question.approvers) return viewer.admin || isAsker(viewer, question);
  return approverByRole(viewer, question.approvers) && !mayBeAsker(viewer, question);
}

/**
 * Whether the viewer sees it: whoever may answer it; the caller, who sees its own call wait
 * for someone else; and an approver who may be the caller under another name, who sees it
 * wait too (others' arguments are shown to nobody else).
 */
export function maySee(viewer: InboxViewer, question: QuestionOwner): boolean {
  if (!question.approvers) return mayAnswer(viewer, question);
  return isAsker(viewer, question) || approverByRole(viewer, question.approvers);
}

function approverByRole(viewer: InboxViewer, approvers: readonly string[]): boolean {
  if (viewer.admin) return true;
  const roles = viewer.roles?.() ?? [];
  return approvers.some((role) => roles.includes(role));
}
