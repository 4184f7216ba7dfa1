import { callerName } from '@switchboard/core';
import { sqliteConnection } from '@switchboard/persistence';
import type { DataSource, SelectQueryBuilder } from 'typeorm';
import { AuditRecordEntity } from '../audit-record.entity.js';
import type { AuditDecision, AuditFilter, AuditRow } from '../audit.types.js';
import { readerSchemaProblem } from '../chain/reader-schema.js';

import { decodeCursor, encodeCursor, type AuditOrder } from './audit-cursor.js';
import { principalMatch, type PrincipalMatch } from './principal-names.js';
import { unmatchedFilters } from './unmatched-filters.js';

export { decodeCursor, encodeCursor, InvalidCursorError, type AuditOrder } from './audit-cursor.js';

export interface AuditPage {
  items: AuditRow[];
  /** Pass back as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
  /**
   * On the last page of an oldest-first read with no `until`: pass it back as `cursor` later
   * to get only the rows committed since (an importer's poll). Ids are given at commit, so
   * no row can arrive later below it.
   */
  resumeCursor?: string;
}

/**
 * `audit stats`. Every count on one line is over the same rows:
 *
 * - `calls`, `errors`, `denials` (top level), `byTool` and `byPrincipal`: `tools/call` rows
 *   only. `calls`: all of them, whatever the decision; `errors`: those that ended in an
 *   error (outcome `error` or `tool_error`); `cancelled`: those the host cancelled or left
 *   (outcome `cancelled`: it got no answer, which is no error); `denials`: those whose decision is not
 *   `allowed` (`denied`, `limited`, `unauthenticated` or `refused`: the gateway did not
 *   let the call reach an upstream).
 * - `rows`, `byDecision` and `byMethod`: every row the filters match, whatever its method
 *   (HTTP refusals, reads, prompts, approvals, the gateway's own rows), with `errors` and
 *   `denials` per method defined as above.
 */
export interface AuditStats {
  /** Every matching row. */
  rows: number;
  /** Every matching row, by decision (all five decisions, zeros included). */
  byDecision: Record<AuditDecision, number>;
  /** `tools/call` rows. */
  calls: number;
  /** `tools/call` rows with outcome `error` or `tool_error`. */
  errors: number;
  /** `tools/call` rows with outcome `cancelled`: the host got no answer (it cancelled, or went away). */
  cancelled: number;
  /** `tools/call` rows not allowed. */
  denials: number;
  /** `tools/call` rows per public tool name, most calls first. */
  byTool: ToolStats[];
  /** `tools/call` rows per principal, most calls first; principals with no tool call are left out. */
  byPrincipal: PrincipalStats[];
  /** Every matching row per method, most rows first. */
  byMethod: MethodStats[];
}

export interface ToolStats {
  /** The public (prefixed) tool name the host called; null for calls that named none (no or a non-string `name`). */
  tool: string | null;
  /**
   * The upstream its calls went to. A call refused before routing (an unknown tool, a
   * policy denial) has none, and is counted on its tool's line all the same; null when no
   * call of the tool was routed. Several (a reload moved the tool) are joined with `,`.
   */
  upstream: string | null;
  calls: number;
  errors: number;
  denials: number;
}

export interface PrincipalStats {
  principal: string;
  calls: number;
  errors: number;
  denials: number;
}

export interface MethodStats {
  method: string;
  rows: number;
  errors: number;
  denials: number;
}

const DECISIONS: readonly AuditDecision[] = ['allowed', 'denied', 'limited', 'unauthenticated', 'refused'];
/** Counted as a denial by `stats`: a decision other than allowed (nothing reached an upstream). */
const DENIAL = `CASE WHEN r.decision <> 'allowed' THEN 1 ELSE 0 END`;
/** Counted as an error by `stats`: a JSON-RPC error, or a tool that reported failure. */
const ERROR = `CASE WHEN r.outcome IN ('error', 'tool_error') THEN 1 ELSE 0 END`;
/** Counted apart by `stats`: a call its host cancelled ended neither well nor in an error. */
const CANCELLED = `CASE WHEN r.outcome = 'cancelled' THEN 1 ELSE 0 END`;

/** Adds the three counts every stats table has: rows (as `countAs`), errors and denials. */
function counted<Q extends SelectQueryBuilder<AuditRecordEntity>>(query: Q, countAs: 'rows' | 'calls'): Q {
  return query.addSelect('COUNT(*)', countAs).addSelect(`SUM(${ERROR})`, 'errors').addSelect(`SUM(${DENIAL})`, 'denials') as Q;
}

/**
 * Reading the log: filtered pages with opaque keyset cursors (stable while rows are
 * appended, no OFFSET scans), an async iterator that walks any number of rows in fixed-size
 * chunks (constant memory, for export and verify), and the counts of `audit stats`.
 */
export class AuditQuery {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * One page. With `scanRows`, a filter that no index serves (tool, decision, method,
   * upstream, session) or a time bound reads at most that many consecutive ids (within the
   * ids of the time range, when the time index holds at most that many rows in it):
   * better-sqlite3 runs on the caller's thread, and in the daemon an unbounded scan of a
   * large log holds every call for seconds. Such a page may then hold fewer than `limit`
   * items, even none, and still have a `nextCursor` (where its scan stopped).
   */
  async page(
    filter: AuditFilter,
    options: { limit: number; cursor?: string; order?: AuditOrder; scanRows?: number },
  ): Promise<AuditPage> {
    const order = options.order ?? 'desc';
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor, filter, order);
    // Read before the page: every matching row up to it is on this page or an earlier one
    // once the page is the last, whatever commits while it is read.
    const resumable = order === 'asc' && filter.until === undefined;
    const newestBefore = resumable ? await this.newestId() : undefined;
    let keyed: AuditFilter =
      after === undefined ? filter : order === 'asc' ? { ...filter, afterId: max(filter.afterId, after) } : { ...filter, beforeId: min(filter.beforeId, after) };
    const principal = await this.principalOf(filter);
    // A principal in several spellings is checked on the ids walked (select()): unindexed too.
    const unindexed = scansUnindexed(filter) || (principal !== undefined && principal.spellings.length > 1);
    const window = options.scanRows !== undefined && unindexed ? await this.scanWindow(keyed, order, options.scanRows) : undefined;
    if (window) keyed = { ...keyed, afterId: window.afterId, beforeId: window.beforeId };
    const rows = await this.select(keyed, principal, order)
      .orderBy('r.id', order === 'asc' ? 'ASC' : 'DESC')
      .limit(options.limit + 1)
      .getMany();
    const items = rows.slice(0, options.limit).map(toRow);
    if (rows.length > options.limit) return { items, nextCursor: encodeCursor(items[items.length - 1].id, filter, order) };
    if (window?.resumeAt !== undefined) return { items, nextCursor: encodeCursor(window.resumeAt, filter, order) };
    if (!resumable) return { items };
    const seen = Math.max(newestBefore ?? 0, after ?? 0, items.length > 0 ? items[items.length - 1].id : 0);
    return { items, resumeCursor: encodeCursor(seen, filter, order) };
  }

  /**
   * For a reader that found no rows: each filter no row of the whole log matches, as a note
   * with the value most likely meant (unmatched-filters.ts).
   */
  unmatchedFilters(filter: AuditFilter): Promise<string[]> {
    return unmatchedFilters(this.dataSource, filter, async (only) => {
      const found = await this.select(only, await this.principalOf(only)).select('r.id', 'id').limit(1).getRawOne();
      return found !== undefined;
    });
  }

  /** The filter's principal as the log spells it (principalMatch), read once for all the queries of one call. */
  private principalOf(filter: AuditFilter): Promise<PrincipalMatch | undefined> {
    return filter.principal === undefined ? Promise.resolve(undefined) : principalMatch(this.dataSource, filter.principal);
  }

  /** The newest row's id (0 for an empty log), from the primary key alone. */
  async newestId(): Promise<number> {
    const raw = await this.dataSource.getRepository(AuditRecordEntity).createQueryBuilder('r').select('MAX(r.id)', 'id').getRawOne<{ id: number | null }>();
    return raw?.id ?? 0;
  }

  /**
   * The ids a bounded page reads: `scanRows` ids from where the page starts, within the ids
   * the table holds (so a pruned log does not page through its missing ids). `resumeAt`:
   * the cursor to continue from when rows are left beyond the window.
   */
  private async scanWindow(
    filter: AuditFilter,
    order: AuditOrder,
    scanRows: number,
  ): Promise<{ afterId: number; beforeId: number; resumeAt?: number }> {
    // Two reads: SQLite answers MIN or MAX alone from the primary key, both at once by a scan.
    const bound = async (of: 'MIN' | 'MAX') =>
      (await this.dataSource.getRepository(AuditRecordEntity).createQueryBuilder('r').select(`${of}(r.id)`, 'id').getRawOne<{ id: number | null }>())?.id ?? null;
    const span = await this.timeSpan(filter, scanRows);
    if (span === 'none') return { afterId: 0, beforeId: 1 };
    const first = span?.lo ?? (await bound('MIN'));
    const last = span?.hi ?? (await bound('MAX'));
    const afterId = Math.max(filter.afterId ?? 0, (first ?? 1) - 1);
    const beforeId = Math.min(filter.beforeId ?? Infinity, (last ?? 0) + 1);
    if (beforeId - afterId - 1 <= scanRows) return { afterId, beforeId };
    return order === 'asc'
      ? { afterId, beforeId: afterId + scanRows + 1, resumeAt: afterId + scanRows }
      : { afterId: beforeId - scanRows - 1, beforeId, resumeAt: beforeId - scanRows };
  }

  /**
   * The ids of the rows in the filter's time range, read from the time index alone, when
   * it holds at most `cap` of them: `none` when it holds none, undefined without a time
   * bound or with more. A page walks ids, not times (`at` is arrival, the id is given at
   * commit), so without this a range of a few rows (`since` an hour ago, newest first) read
   * every older row of the log looking for more; with it the page reads only the ids from
   * the range's first to its last.
   */
  private async timeSpan(filter: AuditFilter, cap: number): Promise<{ lo: number; hi: number } | 'none' | undefined> {
    if (filter.since === undefined && filter.until === undefined) return undefined;
    const where: string[] = [];
    const params: number[] = [];
    if (filter.since !== undefined) {
      where.push('at >= ?');
      params.push(filter.since);
    }
    if (filter.until !== undefined) {
      where.push('at < ?');
      params.push(filter.until);
    }
    const [span] = (await this.dataSource.query(
      `SELECT COUNT(*) AS n, MIN(id) AS lo, MAX(id) AS hi FROM (SELECT id FROM audit_entry WHERE ${where.join(' AND ')} LIMIT ?)`,
      [...params, cap + 1],
    )) as { n: number; lo: number | null; hi: number | null }[];
    if (span.n === 0) return 'none';
    return span.n > cap ? undefined : { lo: span.lo!, hi: span.hi! };
  }

  /**
   * Why what this class reads may not be the chained rows (a rewritten audit_record view, a
   * trigger), or undefined: see readerSchemaProblem. Two small reads of the schema.
   */
  schemaProblem(): string | undefined {
    return readerSchemaProblem(sqliteConnection(this.dataSource));
  }

  /** Every matching row in id order, fetched `chunk` at a time. */
  async *rows(filter: AuditFilter, order: AuditOrder = 'asc', chunk = 1000): AsyncGenerator<AuditRow> {
    let cursor: string | undefined;
    do {
      const page = await this.page(filter, { limit: chunk, cursor, order });
      yield* page.items;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  /**
   * The newest `count` rows, oldest first (for `audit tail`), fetched in chunks like rows():
   * `tail -n 100000` held all of them at once (500 MB for 100,000 rows). The first of them
   * is found by its id alone, then they are walked up from there.
   */
  async *last(filter: AuditFilter, count: number, chunk = 1000): AsyncGenerator<AuditRow> {
    const first = await this.select(filter, await this.principalOf(filter), 'desc')
      .select('r.id', 'id')
      .orderBy('r.id', 'DESC')
      .offset(count - 1)
      .limit(1)
      .getRawOne<{ id: number }>();
    yield* this.rows(first === undefined ? filter : { ...filter, afterId: max(filter.afterId, first.id - 1) }, 'asc', chunk);
  }

  /**
   * Counts for `audit stats`; see AuditStats for what each one counts. Four reads: rows
   * committed between them can make the totals differ by those rows.
   */
  async stats(filter: AuditFilter): Promise<AuditStats> {
    const principal = await this.principalOf(filter);
    const byDecisionRaw = await this.select(filter, principal)
      .select('r.decision', 'decision')
      .addSelect('COUNT(*)', 'rows')
      .groupBy('r.decision')
      .getRawMany<{ decision: AuditDecision; rows: number }>();
    const byMethodRaw = await counted(this.select(filter, principal).select('r.method', 'method'), 'rows')
      .addSelect(`SUM(${CANCELLED})`, 'cancelled')
      .groupBy('r.method')
      .getRawMany<MethodStats & { cancelled: number }>();
    // Grouped by name and upstream here, merged per name below: a call refused before
    // routing has no upstream, and must still count on its tool's one line.
    const byToolRaw = await counted(this.toolCalls(filter, principal).select('r.name', 'tool').addSelect('r.upstream', 'upstream'), 'calls')
      .groupBy('r.name')
      .addGroupBy('r.upstream')
      .getRawMany<ToolStats>();
    // By caller: a key and a token user of the same name are two lines (callerName).
    const byPrincipalRaw = await counted(this.toolCalls(filter, principal).select('r.principal', 'principal').addSelect('r.auth_method', 'authMethod'), 'calls')
      .groupBy('r.principal')
      .addGroupBy('r.auth_method')
      .getRawMany<PrincipalStats & { authMethod: string }>();

    const byDecision = Object.fromEntries(DECISIONS.map((d) => [d, 0])) as Record<AuditDecision, number>;
    for (const d of byDecisionRaw) byDecision[d.decision] = (byDecision[d.decision] ?? 0) + Number(d.rows);
    const byMethod = byMethodRaw
      .map((m) => ({ method: m.method, rows: Number(m.rows), errors: Number(m.errors), denials: Number(m.denials) }))
      .sort((a, b) => b.rows - a.rows || compare(a.method, b.method));
    const calls = byMethod.find((m) => m.method === 'tools/call');
    const cancelled = Number(byMethodRaw.find((m) => m.method === 'tools/call')?.cancelled ?? 0);
    return {
      rows: byMethod.reduce((sum, m) => sum + m.rows, 0),
      byDecision,
      calls: calls?.rows ?? 0,
      errors: calls?.errors ?? 0,
      cancelled,
      denials: calls?.denials ?? 0,
      byTool: mergeTools(byToolRaw),
      byPrincipal: byPrincipalRaw
        .map((p) => ({ principal: callerName({ id: p.principal, authMethod: p.authMethod }), calls: Number(p.calls), errors: Number(p.errors), denials: Number(p.denials) }))
        .sort((a, b) => b.calls - a.calls || compare(a.principal, b.principal)),
      byMethod,
    };
  }

  /** The filtered rows that are tool calls (on top of a `method` filter, never instead of it). */
  private toolCalls(filter: AuditFilter, principal: PrincipalMatch | undefined): SelectQueryBuilder<AuditRecordEntity> {
    return this.select(filter, principal).andWhere(`r.method = 'tools/call'`);
  }

  /**
   * `order`: how the caller will sort by id. Newest first with both time bounds, `until` is
   * kept out of the time index (`+`): given the whole range, SQLite reads and sorts all of
   * its rows for every page (3 s a page for 950,000 rows), where walking the ids down from
   * the cursor reads only the page's own rows (and, on the first page, those after `until`).
   * `principal`: filter.principal as the log spells it (principalOf).
   */
  private select(filter: AuditFilter, principal: PrincipalMatch | undefined, order?: AuditOrder): SelectQueryBuilder<AuditRecordEntity> {
    const q = this.dataSource.getRepository(AuditRecordEntity).createQueryBuilder('r');
    if (filter.since !== undefined) q.andWhere('r.at >= :since', { since: filter.since });
    if (filter.until !== undefined) {
      q.andWhere(order === 'desc' && filter.since !== undefined ? '+r.at < :until' : 'r.at < :until', { until: filter.until });
    }
    if (principal !== undefined) {
      const { spellings, authMethod } = principal;
      // One spelling (nearly always) is read from the principal index, in id order. Several
      // are not, and through that index every page would sort all their rows: they are
      // checked on the ids walked instead (`+`), which page() then bounds as any unindexed filter.
      if (spellings.length === 1) q.andWhere('r.principal = :principal', { principal: spellings[0] });
      else if (spellings.length > 1) q.andWhere('+r.principal IN (:...spellings)', { spellings });
      else q.andWhere('1 = 0');
      if (authMethod !== undefined) q.andWhere('r.auth_method = :authMethod', { authMethod });
    }
    if (filter.tool !== undefined) {
      q.andWhere(`r.method = 'tools/call'`).andWhere('(r.name = :tool OR r.original_name = :tool)', { tool: filter.tool });
    }
    if (filter.decision !== undefined) q.andWhere('r.decision = :decision', { decision: filter.decision });
    if (filter.method !== undefined) q.andWhere('r.method = :method', { method: filter.method });
    if (filter.upstream !== undefined) q.andWhere('r.upstream = :upstream', { upstream: filter.upstream });
    if (filter.sessionId !== undefined) q.andWhere('r.session_id = :sessionId', { sessionId: filter.sessionId });
    if (filter.afterId !== undefined) q.andWhere('r.id > :afterId', { afterId: filter.afterId });
    if (filter.beforeId !== undefined) q.andWhere('r.id < :beforeId', { beforeId: filter.beforeId });
    return q;
  }
}

/**
 * Whether a page may read rows its filters leave out before it finds its own: a filter no
 * index serves, or a time bound. Pages are read in id order and `at` only roughly follows
 * the id, so SQLite walks the ids from the page's end (newest first with `since` an hour
 * ago and few rows in it, every older row of the log; likewise `until` newest first, or
 * `since` oldest first) rather than use the time index. Principal alone is indexed in id
 * order (see select()).
 */
function scansUnindexed(filter: AuditFilter): boolean {
  if (filter.since !== undefined || filter.until !== undefined) return true;
  return [filter.tool, filter.decision, filter.method, filter.upstream, filter.sessionId].some((f) => f !== undefined);
}

function toRow(e: AuditRecordEntity): AuditRow {
  return { ...e, argumentsTruncated: Boolean(e.argumentsTruncated) };
}

const max = (a: number | undefined, b: number) => (a === undefined ? b : Math.max(a, b));
const min = (a: number | undefined, b: number) => (a === undefined ? b : Math.min(a, b));

/** One line per tool name: counts summed over its upstreams, the non-null upstreams listed. */
function mergeTools(raw: ToolStats[]): ToolStats[] {
  const tools = new Map<string | null, ToolStats & { upstreams: Set<string> }>();
  for (const r of raw) {
    const tool = r.tool;
    let t = tools.get(tool);
    if (!t) tools.set(tool, (t = { tool, upstream: null, calls: 0, errors: 0, denials: 0, upstreams: new Set() }));
    t.calls += Number(r.calls);
    t.errors += Number(r.errors);
    t.denials += Number(r.denials);
    if (r.upstream !== null) t.upstreams.add(r.upstream);
  }
  return [...tools.values()]
    .map(({ upstreams, ...t }) => ({ ...t, upstream: upstreams.size === 0 ? null : [...upstreams].sort(compare).join(',') }))
    .sort((a, b) => b.calls - a.calls || compare(a.tool ?? '', b.tool ?? ''));
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
