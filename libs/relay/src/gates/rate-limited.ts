import { ErrorCode, McpError, callerKey, durationText } from '@switchboard/core';
import type { RequestContext, RelayServices } from '../relay.types.js';

/**
 * Runs `forward` through the rate-limit gate, the last one (tools-call.ts): after the catalog
 * resolved the request to `server`, before anything goes upstream. A refused request
 * answers -31429 with `data.retryAfterMs`, and its audit row says `limited` and which limit.
 * The upstream's concurrency slot is held until the answer is in.
 */
export async function rateLimited<T>(ctx: RequestContext, services: RelayServices, server: string, forward: () => Promise<T>): Promise<T> {
  if (!services.limiter?.enabled()) return forward();
  const name = ctx.request.method === 'tools/call' && typeof ctx.params.name === 'string' ? ctx.params.name : null;
  const admission = await services.limiter.admit({ principal: callerKey(ctx.session.principal), server, method: ctx.request.method, name });
  if (!admission.ok) {
    ctx.audit.limitedBy = admission.rule;
    // The message names the wait data.retryAfterMs holds, rounded up but not to whole seconds.
    throw new McpError(ErrorCode.RateLimited, `Rate limited: ${admission.reason}; retry in ${durationText(admission.retryAfterMs)}`, {
      retryAfterMs: admission.retryAfterMs,
    });
  }
  try {
    return await forward();
  } finally {
    admission.release();
  }
}
