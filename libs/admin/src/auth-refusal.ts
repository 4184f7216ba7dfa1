import type { IncomingMessage, ServerResponse } from 'node:http';
import { refusalAnswer, type AuthRefusal } from '@switchboard/auth';
import { httpRefusal, type RefusalListener } from '@switchboard/downstream';
import { sendError } from './json-response.js';

/**
 * Refuses an admin or inbox request whose credential failed: the audit row with the whole
 * reason, the answer (status, challenge) with what the caller is told.
 */
export function sendAuthRefusal(req: IncomingMessage, res: ServerResponse, refusal: AuthRefusal, onRefused: RefusalListener | undefined): void {
  const holder = refusal.attributedTo;
  onRefused?.({ ...httpRefusal(req, refusal.reason), decision: 'unauthenticated', rule: refusal.rule, ...(holder && { principal: holder }) });
  const answer = refusalAnswer(req, refusal);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  sendError(res, answer.status, `${answer.statusText.toLowerCase()}: ${answer.told}`);
}
