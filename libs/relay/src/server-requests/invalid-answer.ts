import type { AuditEntry } from '@switchboard/audit';
import { ErrorCode, McpError } from '@switchboard/core';
import type { Logger } from '@switchboard/observability';
import type { ServerRequest } from '@switchboard/upstream';

/**
 * The error an upstream gets for a host's answer it may not have (`problems`): a failure of
 * the gateway's side (-32603: the upstream asked nothing wrong). Sets the audit row's rule
 * and logs the problems.
 */
export function invalidAnswer(logger: Pick<Logger, 'warn'> | undefined, req: ServerRequest, entry: AuditEntry, problems: string[]): McpError {
  entry.rule = 'relay:invalid-answer';
  logger?.warn(
    { upstream: req.connection.name, method: req.request.method, session: entry.sessionId, problems },
    'a host answered a relayed request with a result the request does not allow; the upstream gets an error',
  );
  return new McpError(ErrorCode.InternalError, `The host's answer to ${req.request.method} is invalid: ${problems.join('; ')}`);
}
