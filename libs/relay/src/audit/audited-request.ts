import { AuditUnavailableError, AUDIT_UNAVAILABLE_CODE, AUDIT_UNAVAILABLE_RULE, type AuditEntry, type AuditLog } from '@switchboard/audit';
import { ErrorCode, McpError, abandonmentOf, answerDecided, jsonTextOf, newTraceId, type Abandonment } from '@switchboard/core';
import type { Item, MethodHandler, RelayServices, RequestContext } from '../relay.types.js';
import { sessionFields } from './session-fields.js';

/** Without a policy engine (tests, tools), whatever the catalog can route is allowed by this rule. */
const DEFAULT_RULE = 'default-allow';

export interface Refusal {
  rule: string;
  error: McpError;
}

/**
 * Runs one recorded request (tools/call, resources/read and subscribe, prompts/get, completion/complete)
 * and writes its row: who, what, with which arguments, what was decided and how it ended.
 * In strict mode the answer (result or error) is released only once the row is committed;
 * if it cannot be, the host gets -32013 instead, and strict mode refuses new requests
 * until the log is writable again.
 */
export async function runAudited(
  audit: AuditLog,
  handler: MethodHandler,
  ctx: RequestContext,
  services: RelayServices,
  refusal: Refusal | undefined,
): Promise<Item> {
  const started = performance.now();
  const entry = entryOf(ctx);
  let errorMessage: string | null = null;
  const facts = ctx.audit;
  facts.traceId = entry.traceId;
  let result: Item | undefined;
  let failure: unknown;
  if (!refusal) {
    try {
      audit.assertWritable();
    } catch (err) {
      if (!(err instanceof AuditUnavailableError)) throw err;
      refusal = { rule: AUDIT_UNAVAILABLE_RULE, error: new McpError(AUDIT_UNAVAILABLE_CODE, err.message) };
    }
  }
  if (refusal) {
    failure = refusal.error;
    entry.decision = 'refused';
    entry.rule = refusal.rule;
  } else {
    audit.expectRow();
    try {
      result = await handler(ctx, services);
    } catch (err) {
      failure = err;
    }
    entry.upstream = facts.upstream;
    entry.originalName = facts.originalName;
    if (facts.name !== null) entry.name = facts.name;
    if (facts.limitedBy !== null) {
      entry.decision = 'limited';
      entry.rule = facts.limitedBy;
    } else if (facts.deniedBy === null && facts.upstream !== null) {
      // A known route alone does not make it allowed: a tools/call records its route before
      // the gates, so that a denied call's row names the upstream too (tools-call.ts).
      entry.decision = 'allowed';
      entry.rule = facts.allowedBy ?? DEFAULT_RULE;
    } else if (facts.deniedBy !== null) {
      entry.decision = 'denied';
      entry.rule = facts.deniedBy;
    } else {
      // Failed before any route or rule: params its method does not take (no tool name, a
      // URI that is no string). Malformed, as the other request:* refusals, not denied.
      entry.decision = 'refused';
      entry.rule = failure instanceof McpError && failure.code === ErrorCode.InvalidParams ? 'request:invalid-params' : 'request:invalid';
    }
  }
  entry.latencyMs = Math.round((performance.now() - started) * 1000) / 1000;
  // A request its host gave up on gets no answer from the peer, whatever the handler ended
  // with (the upstream's "Request cancelled", even a late result): the row says what the host
  // got instead, as error_code and error_message always do.
  const abandoned = abandonmentOf(ctx.signal);
  if (abandoned?.kind === 'cancelled' || (abandoned?.kind === 'closed' && !abandoned.told)) {
    // No answer at all: no code. Not an error of the call's, so `audit stats` does not count it as one.
    entry.outcome = entry.decision === 'allowed' ? 'cancelled' : null;
    errorMessage = abandonmentText(abandoned);
  } else if (abandoned?.kind === 'closed') {
    // The session ended and its transport told the host so (-32000): that is its answer.
    entry.outcome = entry.decision === 'allowed' ? 'error' : null;
    entry.errorCode = abandoned.told!.code;
    errorMessage = abandoned.told!.message;
  } else if (failure === undefined) {
    // A task-augmented tools/call is answered with the task: how the tool ended is tasks/result's row.
    entry.outcome = ctx.request.method === 'tools/call' && 'task' in result! ? 'task' : result!.isError === true ? 'tool_error' : 'ok';
    entry.responseBytes = Buffer.byteLength(jsonTextOf(result!));
  } else {
    // Only a request that went upstream has an outcome; a refusal's is its decision.
    entry.outcome = entry.decision === 'allowed' ? 'error' : null;
    const { code, message } = describe(failure);
    entry.errorCode = code;
    errorMessage = message;
  }
  const written = audit.record(entry, argumentsOf(ctx.request.method, ctx.params), errorMessage, refusal === undefined);
  if (audit.mode === 'strict' && !(refusal?.rule === AUDIT_UNAVAILABLE_RULE)) {
    // The row says what the host gets; a cancel while it is being written must not take that away.
    answerDecided(ctx.signal);
    try {
      await written;
    } catch (err) {
      if (err instanceof AuditUnavailableError) throw new McpError(AUDIT_UNAVAILABLE_CODE, err.message);
      throw err;
    }
  }
  if (failure !== undefined) throw failure;
  return result!;
}

/** Why a request got no answer, for its rows' error_message (redacted by AuditLog.record). */
export function abandonmentText(abandoned: Abandonment): string {
  if (abandoned.kind === 'closed') return abandoned.told ? abandoned.told.message : 'No answer: the session ended before the request completed';
  return `Cancelled by the host${abandoned.reason ? `: ${abandoned.reason}` : ''}`;
}

/** The row's fields known before the request runs; the arguments and error text are AuditLog.record's to fill in. */
function entryOf(ctx: RequestContext): AuditEntry {
  const { session, request, params } = ctx;
  const who = sessionFields(session);
  // Field by field: a spread in the middle of this literal takes V8's slow path (a runtime
  // copy, then a map transition for each later field) on every recorded request.
  return {
    at: Date.now(),
    principal: who.principal,
    authMethod: who.authMethod,
    sessionId: who.sessionId,
    transport: who.transport,
    clientName: who.clientName,
    clientVersion: who.clientVersion,
    protocolVersion: who.protocolVersion,
    upstream: null,
    method: request.method,
    name: publicName(request.method, params),
    originalName: null,
    arguments: null,
    argumentsTruncated: false,
    argumentsDigest: null,
    decision: 'denied',
    rule: null,
    outcome: null,
    errorCode: null,
    errorMessage: null,
    latencyMs: null,
    responseBytes: null,
    requestId: String(request.id),
    traceId: traceIdOf(params),
  };
}

function publicName(method: string, params: Item): string | null {
  if (method === 'resources/read' || method === 'resources/subscribe') return stringOrNull(params.uri);
  if (method === 'completion/complete') {
    const ref = params.ref as Item | undefined;
    return stringOrNull(ref?.name ?? ref?.uri);
  }
  return stringOrNull(params.name);
}

function argumentsOf(method: string, params: Item): unknown {
  if (method === 'completion/complete') return { argument: params.argument, context: params.context };
  if (method === 'resources/read' || method === 'resources/subscribe') return undefined;
  return params.arguments;
}

/**
 * A W3C trace context the host put in `_meta` (traceparent) is kept, so the row joins the
 * host's trace; otherwise the gateway starts one.
 */
function traceIdOf(params: Item): string {
  const traceparent = (params._meta as Item | undefined)?.traceparent;
  if (typeof traceparent === 'string') {
    const match = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent);
    if (match) return match[1];
  }
  return newTraceId();
}

function describe(err: unknown): { code: number; message: string } {
  if (err instanceof McpError) return { code: err.code, message: err.message };
  // Not an McpError: the host is told "Internal error" and so is the log; the detail
  // (possibly a stack) goes only to the daemon's own log, via the peer.
  return { code: ErrorCode.InternalError, message: 'Internal error' };
}

const stringOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);
