import { foldCallerName } from '@switchboard/core';
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
 * Whether the viewer may answer. Without approvers: an admin, or whoever made the call.
 * With approvers: an admin or a member of one of the roles, but never the caller; the
 * caller's name is compared as the policy compares names (case and composition folded), so
 * `Carol` cannot approve what `carol` asked.
 */
export function mayAnswer(viewer: InboxViewer, question: QuestionOwner): boolean {
  if (!question.approvers) return viewer.admin || isAsker(viewer, question);
  if (question.principal !== null && foldCallerName(question.principal) === foldCallerName(viewer.principal)) return false;
  if (viewer.admin) return true;
  const roles = viewer.roles?.() ?? [];
  return question.approvers.some((role) => roles.includes(role));
}

/** Whether the viewer sees it: whoever may answer it, and the caller, who sees its own call wait for an approver. */
export function maySee(viewer: InboxViewer, question: QuestionOwner): boolean {
  return mayAnswer(viewer, question) || isAsker(viewer, question);
}
