import { ErrorCode, McpError, durationText, type CancelSignal } from '@switchboard/core';
import { InboxFullError, type Inbox, type InboxOutcome } from '@switchboard/inbox';
import type { Item } from '../relay.types.js';
import { elicitationMode } from './host-capability.js';

export interface InboxElicitation {
  inbox: Inbox;
  server: string;
  /** Whose request caused it; null when unknown (then only admins see it). */
  principal: string | null;
  timeoutMs: number;
  signal?: CancelSignal;
}

/**
 * Puts an elicitation no host could take in the web inbox and waits for a human's answer.
 * Returns the result for the upstream (accept/decline/cancel, as the human gave it) and who
 * answered, for the audit row. Nobody answering in time is a timeout error, as it would be
 * from a host; a withdrawn question means the upstream stopped waiting.
 */
export async function elicitThroughInbox(params: Item, at: InboxElicitation): Promise<{ result: Item; answeredBy: string }> {
  const mode = elicitationMode(params);
  let outcome: InboxOutcome;
  try {
    outcome = await at.inbox.ask(
      {
        kind: 'elicitation',
        mode,
        message: typeof params.message === 'string' ? params.message : '',
        ...(mode === 'form'
          ? { requestedSchema: params.requestedSchema as Item }
          : { url: String(params.url), elicitationId: String(params.elicitationId) }),
        server: at.server,
        principal: at.principal,
        timeoutMs: at.timeoutMs,
      },
      at.signal,
    );
  } catch (err) {
    // Said to the upstream as it is: nobody can be asked now.
    if (err instanceof InboxFullError) throw new McpError(ErrorCode.InvalidRequest, err.message);
    throw err;
  }
  switch (outcome.action) {
    case 'accept':
      return { result: outcome.content === undefined ? { action: 'accept' } : { action: 'accept', content: outcome.content }, answeredBy: outcome.answeredBy };
    case 'decline':
    case 'cancel':
      return { result: { action: outcome.action }, answeredBy: outcome.answeredBy };
    case 'expired':
      throw new McpError(ErrorCode.RequestTimeout, `Nobody answered the elicitation in the inbox within ${durationText(at.timeoutMs)}`);
    case 'withdrawn':
      throw new McpError(ErrorCode.RequestTimeout, 'Request cancelled');
    default:
      throw new McpError(ErrorCode.InternalError, 'Internal error');
  }
}
