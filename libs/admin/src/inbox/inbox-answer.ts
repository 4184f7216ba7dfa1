import type { InboxAnswer } from '@switchboard/inbox';

const FIELDS: Record<InboxAnswer['action'], readonly string[]> = {
  accept: ['content'],
  decline: [],
  cancel: [],
  approve: ['rememberForMs'],
};

export type ParsedAnswer = { ok: true; answer: InboxAnswer } | { ok: false; problems: string[] };

/**
 * The shape of POST /admin/inbox/items/:id/answer's body; whether the answer fits the question
 * (an action it allows, content its form accepts) is the Inbox's to say. Unknown fields are
 * refused rather than dropped, as the audit API's unknown parameters are.
 */
export function parseInboxAnswer(body: unknown): ParsedAnswer {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, problems: ['the body must be a JSON object'] };
  const fields = body as Record<string, unknown>;
  const action = fields.action;
  if (typeof action !== 'string' || !Object.hasOwn(FIELDS, action)) {
    return { ok: false, problems: [`action must be one of ${Object.keys(FIELDS).join(', ')}`] };
  }
  const allowed = FIELDS[action as InboxAnswer['action']];
  const problems = Object.keys(fields)
    .filter((key) => key !== 'action' && !allowed.includes(key))
    .map((key) => `${key} is not a field of a '${action}' answer`);
  const { content, rememberForMs } = fields;
  if (content !== undefined && (typeof content !== 'object' || content === null || Array.isArray(content))) {
    problems.push('content must be an object');
  }
  if (rememberForMs !== undefined && !(Number.isSafeInteger(rememberForMs) && (rememberForMs as number) >= 0)) {
    problems.push('rememberForMs must be a whole number of milliseconds');
  }
  if (problems.length > 0) return { ok: false, problems };
  switch (action) {
    case 'accept':
      return { ok: true, answer: content === undefined ? { action } : { action, content: content as Record<string, unknown> } };
    case 'approve':
      return { ok: true, answer: rememberForMs === undefined ? { action } : { action, rememberForMs: rememberForMs as number } };
    default:
      return { ok: true, answer: { action: action as 'decline' | 'cancel' } };
  }
}
