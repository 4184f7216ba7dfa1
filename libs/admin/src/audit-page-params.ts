import {
  AUDIT_DECISIONS,
  decisionMeant,
  decodeCursor,
  InvalidCursorError,
  isAuditDecision,
  parseInstant,
  type AuditFilter,
  type AuditOrder,
} from '@switchboard/audit';
import { unknownParamProblems, type ParamProblem } from './query-params.js';

export const MAX_PAGE_LIMIT = 1000;
export const DEFAULT_PAGE_LIMIT = 100;
/**
 * Ids one page reads when a filter has no index (tool, decision, ...): about 15 ms of the
 * daemon's event loop, against ~2 s for a whole log of 3 million rows.
 */
export const MAX_SCANNED_ROWS = 20_000;

export interface AuditPageRequest {
  filter: AuditFilter;
  limit: number;
  cursor?: string;
  order: AuditOrder;
}

export type { ParamProblem };

export type ParsedPageRequest = { ok: true; request: AuditPageRequest } | { ok: false; problems: ParamProblem[] };

/** Query parameters that filter on a column by equality, and the filter field each sets. */
const TEXT_FILTERS = {
  principal: 'principal',
  tool: 'tool',
  method: 'method',
  upstream: 'upstream',
  session: 'sessionId',
} as const satisfies Record<string, keyof AuditFilter>;

const KNOWN = ['since', 'until', 'decision', 'limit', 'cursor', 'order', ...Object.keys(TEXT_FILTERS)];
const MAX_TEXT_LENGTH = 1024;

/**
 * Validates GET /admin/api/audit's query string, reporting every bad parameter at once.
 * Unknown parameters are errors too: a misspelt filter (`princpal=`) silently ignored would
 * return the whole log while looking like a filtered answer.
 */
export function parseAuditPageParams(query: Record<string, unknown>): ParsedPageRequest {
  const problems: ParamProblem[] = unknownParamProblems(query, KNOWN);
  const bad = (param: string, message: string) => problems.push({ param, message });
  const text: Record<string, string> = {};
  for (const [param, value] of Object.entries(query)) {
    if (!KNOWN.includes(param)) continue;
    if (typeof value !== 'string') bad(param, 'must be given once, as a plain value');
    else if (value === '') bad(param, 'must not be empty');
    else if (value.length > MAX_TEXT_LENGTH) bad(param, `must be at most ${MAX_TEXT_LENGTH} characters`);
    else text[param] = value;
  }

  const filter: AuditFilter = {};
  for (const [param, field] of Object.entries(TEXT_FILTERS)) {
    if (text[param] !== undefined) filter[field] = text[param];
  }
  for (const param of ['since', 'until'] as const) {
    if (text[param] === undefined) continue;
    const ms = parseInstant(text[param]);
    if (ms === undefined) bad(param, 'must be an ISO 8601 date or date-time, or epoch milliseconds');
    else filter[param] = ms;
  }
  if (filter.since !== undefined && filter.until !== undefined && filter.since >= filter.until) {
    bad('until', 'must be later than since');
  }
  if (text.decision !== undefined) {
    if (isAuditDecision(text.decision)) filter.decision = text.decision;
    else {
      const meant = decisionMeant(text.decision);
      bad('decision', `must be one of ${AUDIT_DECISIONS.join(', ')}${meant ? ` (did you mean '${meant}'?)` : ''}`);
    }
  }

  let limit = DEFAULT_PAGE_LIMIT;
  if (text.limit !== undefined) {
    limit = /^\d{1,4}$/.test(text.limit) ? Number(text.limit) : NaN;
    if (!(limit >= 1 && limit <= MAX_PAGE_LIMIT)) bad('limit', `must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
  }
  const order = text.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') bad('order', 'must be asc or desc');
  const cursorProblem = text.cursor === undefined ? undefined : problemOfCursor(text.cursor, filter, order as AuditOrder);
  if (cursorProblem) bad('cursor', cursorProblem);

  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, request: { filter, limit, cursor: text.cursor, order: order as AuditOrder } };
}

function problemOfCursor(cursor: string, filter: AuditFilter, order: AuditOrder): string | undefined {
  try {
    decodeCursor(cursor, filter, order);
    return undefined;
  } catch (err) {
    if (!(err instanceof InvalidCursorError)) throw err;
    return err.reason === 'other-query'
      ? 'was returned for other filters or another order: send the same ones with it'
      : 'is not a cursor this API returned (pass nextCursor back unchanged)';
  }
}
